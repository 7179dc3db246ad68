package serve

import (
	"fmt"
	"strings"
)

// ModelSource is where New finds models: one named file, or a watched directory.
type ModelSource struct {
	// Name and File: serve the model file File as Name, at Version ("": the first 12 hex digits of the file's
	// SHA-256).
	Name, Version, File string
	// Dir: serve every *.gpz in the directory, named by its file name without the extension, and follow the
	// directory's changes (Name, Version and File empty).
	Dir string
}

// String returns the source as the command line writes it: NAME[@VERSION]=FILE, or the directory.
func (m ModelSource) String() string {
	if m.Dir != "" {
		return m.Dir
	}
	if m.Version != "" {
		return m.Name + "@" + m.Version + "=" + m.File
	}
	return m.Name + "=" + m.File
}

// ParseModelSource parses NAME[@VERSION]=FILE (gpzoo serve --model). NAME and VERSION are made of letters,
// digits, '.', '_' and '-' (they appear in URL paths), start with a letter or digit, and are at most 128 bytes.
func ParseModelSource(s string) (ModelSource, error) {
	id, file, ok := strings.Cut(s, "=")
	if !ok || file == "" {
		return ModelSource{}, &SourceError{Source: s, Msg: "want NAME[@VERSION]=FILE"}
	}
	name, version, at := strings.Cut(id, "@")
	if at && version == "" {
		return ModelSource{}, &SourceError{Source: s, Msg: "empty version after '@'"}
	}
	src := ModelSource{Name: name, Version: version, File: file}
	if err := src.check(); err != nil {
		return ModelSource{}, err
	}
	return src, nil
}

// DirSource returns the source of a watched directory (gpzoo serve --models DIR).
func DirSource(dir string) ModelSource { return ModelSource{Dir: dir} }

func (m ModelSource) check() error {
	if m.Dir != "" {
		if m.Name != "" || m.Version != "" || m.File != "" {
			return &SourceError{Source: m.String(), Msg: "a directory source has no name, version or file"}
		}
		return nil
	}
	if m.File == "" {
		return &SourceError{Source: m.String(), Msg: "no file (want NAME[@VERSION]=FILE, or a directory)"}
	}
	if err := checkSegment("name", m.Name); err != nil {
		return &SourceError{Source: m.String(), Msg: err.Error()}
	}
	if m.Version != "" {
		if err := checkSegment("version", m.Version); err != nil {
			return &SourceError{Source: m.String(), Msg: err.Error()}
		}
	}
	return nil
}

// checkSegment checks a model name or version: a non-empty URL path segment of letters, digits, '.', '_', '-'.
func checkSegment(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s", what)
	}
	if len(s) > 128 {
		return fmt.Errorf("%s of %d bytes (at most 128)", what, len(s))
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && (c == '.' || c == '_' || c == '-'))
		if !ok {
			return fmt.Errorf("%s %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", what, s)
		}
	}
	return nil
}
