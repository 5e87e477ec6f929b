package relgraph

// The field types of docs/protocol.md ("Field types"), little-endian:
//
//	u8 u16 u32 u64 i64 | bool := u8 0/1 | string := len:u16 bytes
//	opt<T> := u8 0 | u8 1 T  | list<T> := count:u16 T...
//	frame := length:u32 request_id:u32 opcode:u8 flags_or_status:u8 body   (length = 6 + |body|)
//
// enc appends fields to a byte slice; dec reads them and records the first error, so a
// decoder reads every field and checks once at the end (missing or trailing bytes are a
// protocol_error, as the server treats a request).

import (
	"encoding/binary"
	"fmt"
)

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *enc) str(s string) {
	e.u16(uint16(len(s)))
	e.b = append(e.b, s...)
}
func (e *enc) optI64(v *int64) {
	if v == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	e.i64(*v)
}
func (e *enc) optU64(v *uint64) {
	if v == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	e.u64(*v)
}
func (e *enc) u64s(vs []uint64) {
	e.u16(uint16(len(vs)))
	for _, v := range vs {
		e.u64(v)
	}
}

// appendFrame appends a whole frame: header, then body.
func appendFrame(dst []byte, id uint32, op Opcode, flags uint8, body []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(6+len(body)))
	dst = binary.LittleEndian.AppendUint32(dst, id)
	dst = append(dst, byte(op), flags)
	return append(dst, body...)
}

type dec struct {
	b    []byte
	err  error
	what string // for messages: "FOLLOW reply"
}

func newDec(b []byte, what string) *dec { return &dec{b: b, what: what} }

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = &Error{Code: CodeProtocolError, Message: fmt.Sprintf("%s: %d bytes missing", d.what, n-len(d.b))}
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
func (d *dec) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}
func (d *dec) u16() uint16 {
	if v := d.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}
func (d *dec) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}
func (d *dec) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}
func (d *dec) i64() int64 { return int64(d.u64()) }
func (d *dec) bool() bool {
	v := d.u8()
	if v > 1 && d.err == nil {
		d.err = &Error{Code: CodeProtocolError, Message: fmt.Sprintf("%s: bool byte %d", d.what, v)}
	}
	return v == 1
}
func (d *dec) str() string { return string(d.take(int(d.u16()))) }
func (d *dec) present() bool {
	v := d.u8()
	if v > 1 && d.err == nil {
		d.err = &Error{Code: CodeProtocolError, Message: fmt.Sprintf("%s: opt byte %d", d.what, v)}
	}
	return v == 1
}
func (d *dec) u64s() []uint64 {
	n := int(d.u16())
	out := make([]uint64, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.u64())
	}
	return out
}

// done reports the first error, or trailing bytes.
func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = &Error{Code: CodeProtocolError, Message: fmt.Sprintf("%s: %d trailing bytes", d.what, len(d.b))}
	}
	return d.err
}
