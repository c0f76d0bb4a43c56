package history

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"
)

// The file is a journal of lines, each "<crc32c as 8 hex digits> <JSON>\n".
// The first line is a header naming the format, its version and a random
// generation that changes whenever the file is rewritten whole; every later
// line is one Entry, and a later line for an ID replaces an earlier one.
// Only the last line may be torn (no newline yet): a writer that died
// mid-append leaves at most that, and it is ignored.
const (
	fileFormat  = "tranquil-history"
	fileVersion = 1
)

// ErrCorrupt reports a history file that cannot be read as a journal. The
// Store moves such a file aside and starts from what it knows.
var ErrCorrupt = errors.New("history: file is corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type fileHeader struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Generation string `json:"generation"`
}

type fileAction struct {
	At      time.Time `json:"at"`
	Method  string    `json:"method,omitempty"`
	Target  string    `json:"target,omitempty"`
	Site    string    `json:"site,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
}

type fileEntry struct {
	ID              string       `json:"id"`
	Kind            Kind         `json:"kind"`
	Script          string       `json:"script,omitempty"`
	Trigger         string       `json:"trigger,omitempty"`
	State           State        `json:"state"`
	ExitCode        *int         `json:"exit_code,omitempty"`
	Signal          string       `json:"signal,omitempty"`
	Reason          string       `json:"reason,omitempty"`
	Start           time.Time    `json:"start"`
	End             time.Time    `json:"end"`
	DurationNS      int64        `json:"duration_ns"`
	Output          string       `json:"output,omitempty"`
	OutputTruncated bool         `json:"output_truncated,omitempty"`
	FirstError      string       `json:"first_error,omitempty"`
	Result          *string      `json:"result,omitempty"` // verbatim bytes: json.RawMessage would be compacted and re-escaped
	Warnings        []string     `json:"warnings,omitempty"`
	Actions         []fileAction `json:"actions,omitempty"`
	Permissions     string       `json:"permissions,omitempty"`
}

func newGeneration() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// frame wraps one JSON value as a journal line.
func frame(js []byte) []byte {
	line := make([]byte, 0, len(js)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(js, castagnoli))
	line = append(line, js...)
	return append(line, '\n')
}

func encodeHeader(gen string) []byte {
	js, _ := json.Marshal(fileHeader{Format: fileFormat, Version: fileVersion, Generation: gen})
	return frame(js)
}

// encodeEntry frames e, which must be normalized.
func encodeEntry(e Entry) ([]byte, error) {
	fe := fileEntry{
		ID: e.ID, Kind: e.Kind, Script: e.Script, Trigger: e.Trigger,
		State: e.State, ExitCode: e.ExitCode, Signal: e.Signal, Reason: e.Reason,
		Start: e.Start, End: e.End, DurationNS: int64(e.Duration),
		Output: e.Output, OutputTruncated: e.OutputTruncated, FirstError: e.FirstError,
		Warnings: e.Warnings, Permissions: e.Permissions,
	}
	if e.Result != nil {
		r := string(e.Result)
		fe.Result = &r
	}
	for _, a := range e.Actions {
		fe.Actions = append(fe.Actions, fileAction(a))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // output and results are read back by us, not embedded in HTML
	if err := enc.Encode(fe); err != nil {
		return nil, fmt.Errorf("history: encoding run %s: %w", e.ID, err)
	}
	return frame(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// encodeFile is the whole-file form: a header and entries oldest first.
func encodeFile(gen string, entries []Entry) ([]byte, error) {
	out := encodeHeader(gen)
	for _, e := range entries {
		line, err := encodeEntry(e)
		if err != nil {
			return nil, err
		}
		out = append(out, line...)
	}
	return out, nil
}

// unframe checks one line (without its newline) and returns its JSON.
func unframe(line []byte) ([]byte, error) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, errors.New("not a journal line")
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return nil, errors.New("bad checksum field")
	}
	js := line[9:]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if crc32.Checksum(js, castagnoli) != want {
		return nil, errors.New("checksum mismatch")
	}
	return js, nil
}

func decodeHeader(line []byte) (fileHeader, error) {
	js, err := unframe(line)
	if err != nil {
		return fileHeader{}, err
	}
	var h fileHeader
	if err := json.Unmarshal(js, &h); err != nil {
		return fileHeader{}, fmt.Errorf("header: %v", err)
	}
	if h.Format != fileFormat {
		return fileHeader{}, fmt.Errorf("header: format %q, want %q", h.Format, fileFormat)
	}
	if h.Version != fileVersion {
		return fileHeader{}, fmt.Errorf("header: version %d, want %d", h.Version, fileVersion)
	}
	if h.Generation == "" {
		return fileHeader{}, errors.New("header: no generation")
	}
	return h, nil
}

func decodeEntry(line []byte) (Entry, error) {
	js, err := unframe(line)
	if err != nil {
		return Entry{}, err
	}
	var fe fileEntry
	if err := json.Unmarshal(js, &fe); err != nil {
		return Entry{}, err
	}
	e := Entry{
		ID: fe.ID, Kind: fe.Kind, Script: fe.Script, Trigger: fe.Trigger,
		State: fe.State, ExitCode: fe.ExitCode, Signal: fe.Signal, Reason: fe.Reason,
		Start: fe.Start, End: fe.End, Duration: time.Duration(fe.DurationNS),
		Output: fe.Output, OutputTruncated: fe.OutputTruncated, FirstError: fe.FirstError,
		Warnings: fe.Warnings, Permissions: fe.Permissions,
	}
	if fe.Result != nil {
		e.Result = json.RawMessage(*fe.Result)
	}
	for _, a := range fe.Actions {
		e.Actions = append(e.Actions, Action(a))
	}
	return normalize(e)
}

// decodeRecords decodes the entry lines in data, which starts at a line
// boundary after the header. It returns the entries in file order, the
// size of each one's line, and how many bytes of data they span; anything
// after that is a torn last line.
// firstLine numbers the first line for error messages.
func decodeRecords(data []byte, firstLine int) (entries []Entry, sizes []int, n int, err error) {
	for lineNo := firstLine; n < len(data); lineNo++ {
		i := bytes.IndexByte(data[n:], '\n')
		if i < 0 {
			if !tornTail(data[n:]) {
				return nil, nil, 0, fmt.Errorf("%w: line %d: unterminated garbage at the end", ErrCorrupt, lineNo)
			}
			break
		}
		e, err := decodeEntry(data[n : n+i])
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: line %d: %v", ErrCorrupt, lineNo, err)
		}
		entries = append(entries, e)
		sizes = append(sizes, i+1)
		n += i + 1
	}
	return entries, sizes, n, nil
}

// tornTail reports whether b, the unterminated end of the file, looks like
// what an interrupted append leaves: a prefix of a journal line, or the
// zeros a filesystem shows for blocks it allocated but never wrote.
func tornTail(b []byte) bool {
	if len(bytes.Trim(b, "\x00")) == 0 {
		return true
	}
	for i, c := range b[:min(len(b), 9)] {
		isHex := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
		if i < 8 && !isHex || i == 8 && c != ' ' {
			return false
		}
	}
	return true
}

// salvage returns the entry lines of a corrupt file that still decode, in
// file order. A file whose header names another format or version gives
// none: its lines may mean something else.
func salvage(data []byte) []Entry {
	var out []Entry
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i == 0 {
			if js, err := unframe(line); err == nil {
				var h fileHeader
				if json.Unmarshal(js, &h) == nil && h.Format != "" && (h.Format != fileFormat || h.Version != fileVersion) {
					return nil
				}
			}
		}
		if e, err := decodeEntry(line); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// decodedFile is a whole file read back.
type decodedFile struct {
	gen     string
	records []Entry // in file order, possibly several per ID
	sizes   []int   // the bytes of each record's line
	size    int     // bytes of complete lines, header included
}

// decodeFile reads a whole file. An empty file decodes as no file at all
// (gen ""). A header torn or missing is corruption: files are created
// whole, so only entry lines can be torn.
func decodeFile(data []byte) (decodedFile, error) {
	if len(data) == 0 {
		return decodedFile{}, nil
	}
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return decodedFile{}, fmt.Errorf("%w: no complete header line", ErrCorrupt)
	}
	h, err := decodeHeader(data[:i])
	if err != nil {
		return decodedFile{}, fmt.Errorf("%w: line 1: %v", ErrCorrupt, err)
	}
	recs, sizes, n, err := decodeRecords(data[i+1:], 2)
	if err != nil {
		return decodedFile{}, err
	}
	return decodedFile{gen: h.Generation, records: recs, sizes: sizes, size: i + 1 + n}, nil
}

// set is the Store's view of the runs: the entries the journal replays to,
// and the bytes of each one's line.
type set struct {
	capacity int
	budget   int64 // the most bytes the entries' lines may take together
	byID     map[string]Entry
	sizes    map[string]int64
	total    int64
}

func newSet(capacity int, budget int64) *set {
	return &set{capacity: capacity, budget: budget, byID: map[string]Entry{}, sizes: map[string]int64{}}
}

// put inserts or replaces e, whose line takes size bytes, then evicts the
// oldest finished runs while there are more than capacity or their lines
// take more than budget. Live runs are never evicted, so a set of live
// runs may exceed both until they finish.
func (s *set) put(e Entry, size int64) {
	s.total += size - s.sizes[e.ID]
	s.byID[e.ID], s.sizes[e.ID] = e, size
	for len(s.byID) > s.capacity || s.total > s.budget {
		var oldest *Entry
		for _, c := range s.byID {
			if c.State.Terminal() && (oldest == nil || newer(c, *oldest) > 0) {
				oldest = &c
			}
		}
		if oldest == nil {
			return
		}
		s.total -= s.sizes[oldest.ID]
		delete(s.byID, oldest.ID)
		delete(s.sizes, oldest.ID)
	}
}

// sorted returns the entries newest first.
func (s *set) sorted() []Entry {
	out := make([]Entry, 0, len(s.byID))
	for _, e := range s.byID {
		out = append(out, e)
	}
	slices.SortFunc(out, newer)
	return out
}

func (s *set) clone() *set {
	c := newSet(s.capacity, s.budget)
	for k, v := range s.byID {
		c.byID[k], c.sizes[k] = v, s.sizes[k]
	}
	c.total = s.total
	return c
}
