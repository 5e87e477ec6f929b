package relgraph

// Errors: a server's error reply is an *Error carrying the protocol's code (docs/protocol.md
// "Errors"), detail and message; a broken connection is a *ConnError saying whether the
// request may have been carried out; a passed deadline is an *Error with CodeTimeout that
// wraps the context's error. errors.Is(err, relgraph.CodeSelfFollow) tests a code.

import (
	"errors"
	"fmt"
	"strconv"
)

// Code is a protocol error code (the status byte of an error reply). A Code is itself an
// error, so errors.Is(err, CodeNotFound) matches an *Error of that code.
type Code uint8

const (
	CodeOK                Code = 0
	CodeInvalidArgument   Code = 1
	CodeInvalidUserID     Code = 2
	CodeSelfFollow        Code = 3
	CodeFollowLimit       Code = 4
	CodeRateLimited       Code = 5
	CodeNotFound          Code = 6
	CodeCorruption        Code = 7
	CodeIOError           Code = 8
	CodeUnavailable       Code = 9
	CodeInternal          Code = 10
	CodeUnauthenticated   Code = 11
	CodeResourceExhausted Code = 12
	CodeProtocolError     Code = 13
	CodeUnsupported       Code = 14
	CodeTimeout           Code = 15 // client-side: a deadline passed
	CodeAlreadyExists     Code = 16
	CodeLimitExceeded     Code = 17
	CodeLsnExpired        Code = 18
	CodeReadOnly          Code = 19
	CodeDiverged          Code = 20
	CodeBlocked           Code = 21
	CodeMoved             Code = 22
	CodeMoving            Code = 23
	CodePermissionDenied  Code = 24
)

var codeNames = [...]string{"ok", "invalid_argument", "invalid_user_id", "self_follow",
	"follow_limit", "rate_limited", "not_found", "corruption", "io_error", "unavailable",
	"internal", "unauthenticated", "resource_exhausted", "protocol_error", "unsupported",
	"timeout", "already_exists", "limit_exceeded", "lsn_expired", "read_only", "diverged",
	"blocked", "moved", "moving", "permission_denied"}

// String is the code's name as docs/protocol.md spells it ("self_follow").
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "code_" + strconv.Itoa(int(c))
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return c.String() }

// Error is an error the server replied with (or CodeTimeout / CodeProtocolError raised here).
type Error struct {
	Code    Code
	Detail  int64  // rate_limited: ms until a token; lsn_expired: the oldest LSN kept; diverged: the first LSN to discard; moved: the owner shard
	Message string // the server's message; for read_only the primary's HOST:PORT (or empty)
	Op      Opcode // the request's opcode (0 for a notice)
	cause   error  // a context error behind CodeTimeout
}

func (e *Error) Error() string {
	s := e.Code.String()
	if e.Op != 0 {
		s = e.Op.String() + ": " + s
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is matches a Code target of the same value.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Unwrap returns the context error behind a timeout.
func (e *Error) Unwrap() error { return e.cause }

// ConnError is a transport failure: the connection broke (or could not be made) before the
// reply came. Sent says the request was written, so its outcome is unknown.
type ConnError struct {
	Addr string
	Sent bool
	Err  error
}

func (e *ConnError) Error() string {
	s := "relgraph: connection to " + e.Addr + ": " + e.Err.Error()
	if e.Sent {
		s += " (request sent: outcome unknown)"
	}
	return s
}
func (e *ConnError) Unwrap() error { return e.Err }

// ErrClosed is returned by calls on a closed Client or Conn.
var ErrClosed = errors.New("relgraph: closed")

// CodeOf returns the protocol code of err: its *Error's code, CodeTimeout for a context
// deadline, CodeUnavailable for a transport failure, CodeOK for nil.
func CodeOf(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return CodeOK
	case errors.As(err, &e):
		return e.Code
	}
	var ce *ConnError
	if errors.As(err, &ce) {
		return CodeUnavailable
	}
	return CodeInternal
}

func timeoutError(op Opcode, cause error) *Error {
	return &Error{Code: CodeTimeout, Op: op, Message: fmt.Sprintf("no reply before the deadline (%v)", cause), cause: cause}
}

// decodeError reads an error_body: detail:i64 message:string.
func decodeError(op Opcode, status uint8, body []byte) *Error {
	d := newDec(body, "error body")
	e := &Error{Code: Code(status), Op: op}
	e.Detail = d.i64()
	e.Message = d.str()
	if d.done() != nil {
		e.Message = "(unreadable error body)"
	}
	return e
}
