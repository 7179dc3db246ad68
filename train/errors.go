package train

import (
	"errors"
	"fmt"
)

// ErrNonFinite is the sentinel of NonFiniteError.
var ErrNonFinite = errors.New("train: non-finite loss or gradient")

// NonFiniteError reports the first NaN or ±Inf met during training. Param is "" (and Index −1) when the loss
// itself is non-finite.
type NonFiniteError struct {
	Step  int
	Param string
	Index int
	Value float64
}

func (e *NonFiniteError) Error() string {
	if e.Param == "" {
		return fmt.Sprintf("train: step %d: non-finite loss %v (params restored to the last good step)", e.Step, e.Value)
	}
	return fmt.Sprintf("train: step %d: non-finite gradient %v for param %q entry %d (params restored to the last good step)", e.Step, e.Value, e.Param, e.Index)
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }
