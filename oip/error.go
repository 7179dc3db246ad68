package oip

import (
	"fmt"
	"net/http"
)

// Error is a failed request: the HTTP status to answer with (4xx for bad input, 5xx for the server's own
// failures) and the message of the protocol's error object.
type Error struct {
	Status int
	Msg    string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Response returns the protocol's error object carrying the message.
func (e *Error) Response() ErrorResponse { return ErrorResponse{Error: e.Msg} }

// Errorf returns a *Error with the given status and a formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// BadRequest returns a *Error with status 400 (Bad Request) and a formatted message.
func BadRequest(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, format, args...)
}

// ErrorResponse is the protocol's error object, the body of every failed request: {"error": "..."}.
type ErrorResponse struct {
	Error string `json:"error"`
}
