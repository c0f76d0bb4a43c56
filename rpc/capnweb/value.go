package capnweb

// Values crossing the wire are represented in Go by a small closed set of
// types. Decoded arguments and results use exactly these:
//
//	JavaScript          Go
//	null                nil
//	undefined           Undefined{}
//	boolean             bool
//	number              float64 (NaN and ±Inf included)
//	string              string
//	bigint              *big.Int
//	Date                time.Time (an invalid Date is InvalidDate{})
//	Uint8Array/Buffer   []byte
//	other byte views    TypedBytes
//	URL                 *url.URL
//	Headers             Headers
//	Error / thrown      *RemoteError
//	Array               []any
//	plain object        *Object inside the session; Go code gets
//	                    map[string]any or *Object (see the package doc)
//	stub or function    *Stub
//
// When sending, the same types are accepted plus Go conveniences: every
// integer and float kind, slices, arrays, maps with string keys (sent
// with sorted keys), Object, structs (their exported fields in order,
// named by their json tag or in lowerCamel case), pointers, errors, and
// objects passed by reference (see [Session]). Nil slices and maps are
// sent empty.

// Undefined is JavaScript's undefined. It is distinct from null (nil).
type Undefined struct{}

// InvalidDate is a JavaScript Date whose time value is NaN.
type InvalidDate struct{}

// TypedBytes is binary data in a JavaScript container other than
// Uint8Array: Type is the constructor name ("ArrayBuffer", "Float64Array",
// …) and Data the little-endian bytes.
type TypedBytes struct {
	Type string
	Data []byte
}

// Headers is a JavaScript Headers object as name/value pairs, in order.
type Headers [][2]string

// byteTypes are the containers the JavaScript peer can rebuild.
var byteTypes = map[string]bool{
	"ArrayBuffer": true, "DataView": true, "Int8Array": true, "Uint8Array": true,
	"Uint8ClampedArray": true, "Int16Array": true, "Uint16Array": true, "Int32Array": true,
	"Uint32Array": true, "BigInt64Array": true, "BigUint64Array": true, "Float32Array": true,
	"Float64Array": true,
}

// reservedKeys are the object keys JavaScript drops on receipt (they exist
// on Object.prototype, plus toJSON). They are dropped here too, both ways:
// the peer would never see them, and Go code never gets them.
var reservedKeys = map[string]bool{
	"constructor": true, "__proto__": true, "__defineGetter__": true, "__defineSetter__": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "hasOwnProperty": true,
	"isPrototypeOf": true, "propertyIsEnumerable": true, "toLocaleString": true,
	"toString": true, "valueOf": true, "toJSON": true,
}
