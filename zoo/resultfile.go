package zoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrBadResultFile is wrapped by the errors of ReadResults and LoadResults for input that is not a gpzoo
// result: empty or truncated JSON, corrupt JSON, or JSON without an entry name.
var ErrBadResultFile = errors.New("zoo: not a gpzoo result")

// ReadResults decodes one JSON result as written by Result.WriteJSON (one split) or MultiResult.WriteJSON
// (several splits; told apart by its "results" key) and returns its per-split Results. Keys it does not know are
// ignored (later releases add keys). Errors wrap ErrBadResultFile and say "truncated" or "corrupt".
func ReadResults(r io.Reader) ([]*Result, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: truncated (empty)", ErrBadResultFile)
	}
	var keys map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&keys); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated JSON", ErrBadResultFile)
		}
		return nil, fmt.Errorf("%w: corrupt JSON: %v", ErrBadResultFile, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: corrupt JSON: data after the result object", ErrBadResultFile)
	}
	if _, multi := keys["results"]; multi {
		var m MultiResult
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%w: corrupt multi-split result: %v", ErrBadResultFile, err)
		}
		if m.Entry == "" || len(m.Results) == 0 {
			return nil, fmt.Errorf("%w: multi-split result without an entry or results", ErrBadResultFile)
		}
		for i, r := range m.Results {
			if r == nil || r.Entry != m.Entry {
				return nil, fmt.Errorf("%w: corrupt multi-split result: result %d is not of entry %s", ErrBadResultFile, i, m.Entry)
			}
		}
		return m.Results, nil
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%w: corrupt result: %v", ErrBadResultFile, err)
	}
	if res.Entry == "" {
		return nil, fmt.Errorf("%w: no \"entry\" key", ErrBadResultFile)
	}
	return []*Result{&res}, nil
}

// LoadResults reads the JSON result file path (see ReadResults). Its errors name the file.
func LoadResults(path string) ([]*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("zoo: %w", err)
	}
	defer f.Close()
	rs, err := ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", path, err)
	}
	return rs, nil
}
