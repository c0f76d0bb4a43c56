package trace

import (
	"slices"
	"sync"
	"time"
)

// Defaults for Limits.
const (
	DefaultCalls       = 2000
	DefaultNavigations = 200
	DefaultConsole     = 300
	DefaultDialogs     = 100
	DefaultSteps       = 1000
	DefaultFailures    = 3
	DefaultText        = 300
	DefaultImage       = 384 << 10
	DefaultOutline     = 8 << 10
	DefaultAccesses    = 256
	DefaultShots       = 24
	DefaultTabs        = 100
)

// Limits bound what a Recorder keeps. A zero field means its default; the
// defaults keep a run's encoded trace to a few megabytes whatever the
// script or its pages do.
type Limits struct {
	Calls       int // calls kept; DefaultCalls
	Navigations int // DefaultNavigations
	Console     int // console lines and page errors kept; DefaultConsole
	Dialogs     int // DefaultDialogs
	Steps       int // steps and progress reports kept; DefaultSteps
	Failures    int // failures with a screenshot and outline; DefaultFailures
	Text        int // bytes of any one text (a message, a target); DefaultText
	Image       int // bytes of one screenshot; larger ones are left out; DefaultImage
	Outline     int // bytes of one outline; DefaultOutline
	// Accesses bounds the distinct kind, value and outcome triples kept;
	// DefaultAccesses. Repeats of a kept one only raise its count.
	Accesses int
	// Shots bounds the action screenshots kept, before and after each
	// counted apart: the first half and the last; DefaultShots.
	Shots int
	// Tabs bounds the tab titles kept; DefaultTabs.
	Tabs int
}

func (l Limits) withDefaults() Limits {
	def := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	def(&l.Calls, DefaultCalls)
	def(&l.Navigations, DefaultNavigations)
	def(&l.Console, DefaultConsole)
	def(&l.Dialogs, DefaultDialogs)
	def(&l.Steps, DefaultSteps)
	def(&l.Failures, DefaultFailures)
	def(&l.Text, DefaultText)
	def(&l.Image, DefaultImage)
	def(&l.Outline, DefaultOutline)
	def(&l.Accesses, DefaultAccesses)
	def(&l.Shots, DefaultShots)
	def(&l.Tabs, DefaultTabs)
	return l
}

// Recorder collects one run's trace under its Limits. It is safe for
// concurrent use and starts no goroutines. Each list keeps its first half
// and, as a ring, its last half: the start shows how the run began, the
// end how it failed.
type Recorder struct {
	lim Limits

	mu            sync.Mutex
	runID         string
	start         time.Time
	seq           int
	calls         keep[Call]
	navs          keep[Navigation]
	console       keep[ConsoleLine]
	dialogs       keep[Dialog]
	steps         keep[Step]
	failures      []Failure
	dropped       int // failures not kept
	claimed       int // places ClaimFailure reserved, not yet filled
	accesses      []Access
	accessAt      map[accessKey]int // index in accesses
	accessDropped int
	shots         keep[Shot]
	shotsBad      int // shots refused: too large, not an image
	tabs          []TabTitle
	titled        map[string]bool // tabs whose title was asked for or is known
}

type accessKey struct {
	kind, value string
	allowed     bool
}

// NewRecorder returns a Recorder for run runID, its clock starting now.
func NewRecorder(runID string, l Limits) *Recorder {
	l = l.withDefaults()
	return &Recorder{
		lim: l, runID: runID, start: time.Now().UTC(),
		calls: newKeep[Call](l.Calls), navs: newKeep[Navigation](l.Navigations),
		console: newKeep[ConsoleLine](l.Console), dialogs: newKeep[Dialog](l.Dialogs),
		steps: newKeep[Step](l.Steps), shots: newKeep[Shot](l.Shots),
	}
}

// Call records c, its texts cut and its page stripped to an [Address],
// and returns its Seq (Seq is set here).
func (r *Recorder) Call(c Call) int {
	t := r.lim.Text
	c.Method, c.Target, c.Tab, c.Page = cut(c.Method, t), cut(c.Target, t), cut(c.Tab, t), cut(Address(c.Page), t)
	c.Code, c.Error, c.File = cut(c.Code, t), cut(c.Error, t), cut(c.File, t)
	c.Line, c.Column = max(c.Line, 0), max(c.Column, 0) // a Call may come with its site
	c.Start = c.Start.UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	c.Seq = r.seq
	r.calls.add(c)
	return c.Seq
}

// SetSite sets where the script made call seq, which may come after the
// call was recorded; a call no longer kept is left alone.
func (r *Recorder) SetSite(seq int, file string, line, column int) {
	file = cut(file, r.lim.Text)
	r.mu.Lock()
	defer r.mu.Unlock()
	// The newest first: a site comes soon after its call.
	for _, part := range [][]Call{r.calls.tail, r.calls.head} {
		for i := len(part) - 1; i >= 0; i-- {
			if part[i].Seq == seq {
				part[i].File, part[i].Line, part[i].Column = file, max(line, 0), max(column, 0)
				return
			}
		}
	}
}

// Shot records s, unless its image is over Limits.Image or not of its
// type (counted as dropped).
func (r *Recorder) Shot(s Shot) {
	if len(s.Image) > r.lim.Image || imageType(s.Image) != s.ImageType || (s.When != Before && s.When != After) {
		r.mu.Lock()
		r.shotsBad++
		r.mu.Unlock()
		return
	}
	s.Image = append([]byte(nil), s.Image...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shots.add(s)
}

// WantTitle reports, once for each tab, whether its title is still to be
// learnt: the first caller asks the page, later ones need not.
func (r *Recorder) WantTitle(tab string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.titled[tab] || len(r.titled) >= 4*r.lim.Tabs {
		return false
	}
	if r.titled == nil {
		r.titled = map[string]bool{}
	}
	r.titled[tab] = true
	return true
}

// TabTitle records the title of the first page tab showed; a tab keeps
// the first title it is given, and an empty one is none.
func (r *Recorder) TabTitle(tab, title string) {
	if tab == "" || title == "" {
		return
	}
	t := r.lim.Text
	tab, title = cut(tab, t), cut(title, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tabs) >= r.lim.Tabs || slices.ContainsFunc(r.tabs, func(x TabTitle) bool { return x.Tab == tab }) {
		return
	}
	if r.titled == nil {
		r.titled = map[string]bool{}
	}
	r.titled[tab] = true
	r.tabs = append(r.tabs, TabTitle{Tab: tab, Title: title})
}

// Navigation records n.
func (r *Recorder) Navigation(n Navigation) {
	t := r.lim.Text
	n.At, n.Tab, n.Kind, n.URL = n.At.UTC(), cut(n.Tab, t), cut(n.Kind, t), cut(n.URL, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.navs.add(n)
}

// Console records l.
func (r *Recorder) Console(l ConsoleLine) {
	t := r.lim.Text
	l.At, l.Tab, l.Level, l.Text = l.At.UTC(), cut(l.Tab, t), cut(l.Level, t), cut(l.Text, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.console.add(l)
}

// dialogMessage is how much of a dialog's message is kept: enough to
// know which dialog it was.
const dialogMessage = 100

// Dialog records d, keeping only the start of its message.
func (r *Recorder) Dialog(d Dialog) {
	t := r.lim.Text
	d.At, d.Tab, d.Type, d.Message = d.At.UTC(), cut(d.Tab, t), cut(d.Type, t), cut(d.Message, min(t, dialogMessage))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dialogs.add(d)
}

// Step records s.
func (r *Recorder) Step(s Step) {
	t := r.lim.Text
	s.At, s.Kind, s.Name, s.Phase, s.Error = s.At.UTC(), cut(s.Kind, t), cut(s.Name, t), cut(s.Phase, t), cut(s.Error, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps.add(s)
}

// ClaimFailure reserves a place for one Failure, which the caller then
// records, and reports whether there was one: a caller that gets none
// takes no screenshot that would be dropped. Many calls failing at once
// claim the places there are, not one each.
func (r *Recorder) ClaimFailure() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures)+r.claimed >= r.lim.Failures {
		return false
	}
	r.claimed++
	return true
}

// Failure records f. An image over Limits.Image, or of another type than
// JPEG or PNG, is left out and noted; the outline is cut.
func (r *Recorder) Failure(f Failure) {
	if f.Image != nil && (len(f.Image) > r.lim.Image || imageType(f.Image) != f.ImageType) {
		f.Note = cut(joinNote(f.Note, "the screenshot was too large or not an image"), r.lim.Text)
		f.Image, f.ImageType = nil, ""
	}
	if f.Image == nil {
		f.ImageType = ""
	}
	f.Image = append([]byte(nil), f.Image...)
	f.Outline, f.Note = cut(f.Outline, r.lim.Outline), cut(f.Note, r.lim.Text)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.claimed > 0:
		r.claimed--
	case len(r.failures)+r.claimed >= r.lim.Failures:
		r.dropped++
		return
	}
	r.failures = append(r.failures, f)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Access records one permission check: its kind, its value and whether
// it was allowed, at time at. A check like one already kept raises that
// one's count; a new one past Limits.Accesses is counted as dropped.
func (r *Recorder) Access(kind, value string, allowed bool, at time.Time) {
	t := r.lim.Text
	k := accessKey{cut(kind, t), cut(value, t), allowed}
	at = at.UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.accessAt[k]; ok {
		a := &r.accesses[i]
		a.Count++
		if at.After(a.Last) {
			a.Last = at
		}
		return
	}
	if len(r.accesses) >= r.lim.Accesses {
		r.accessDropped++
		return
	}
	if r.accessAt == nil {
		r.accessAt = map[accessKey]int{}
	}
	r.accessAt[k] = len(r.accesses)
	r.accesses = append(r.accesses, Access{Kind: k.kind, Value: k.value, Allowed: allowed, Count: 1, First: at, Last: at})
}

// AccessDropped counts n permission checks that could not be recorded,
// such as reports that could not be read.
func (r *Recorder) AccessDropped(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accessDropped += n
}

// Trace returns a copy of what was recorded so far.
func (r *Recorder) Trace() *Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &Trace{
		RunID: r.runID, Start: r.start,
		Calls: r.calls.list(), Navigations: r.navs.list(), Console: r.console.list(),
		Dialogs: r.dialogs.list(), Steps: r.steps.list(),
		Dropped: Dropped{
			Calls: r.calls.dropped, Navigations: r.navs.dropped, Console: r.console.dropped,
			Dialogs: r.dialogs.dropped, Steps: r.steps.dropped, Failures: r.dropped,
			Accesses: r.accessDropped,
		},
		Accesses: slices.Clone(r.accesses),
		Tabs:     slices.Clone(r.tabs),
	}
	t.Dropped.Shots = r.shots.dropped + r.shotsBad
	for _, s := range r.shots.list() {
		s.Image = append([]byte(nil), s.Image...)
		t.Shots = append(t.Shots, s)
	}
	for _, f := range r.failures {
		f.Image = append([]byte(nil), f.Image...)
		t.Failures = append(t.Failures, f)
	}
	return t
}

// keep holds at most n items: the first n/2, and the newest n-n/2 in a
// ring; the ones in between are counted.
type keep[T any] struct {
	headCap, tailCap int
	head, tail       []T
	off              int // oldest item of tail, once it is full
	dropped          int
}

func newKeep[T any](n int) keep[T] { return keep[T]{headCap: n / 2, tailCap: n - n/2} }

func (k *keep[T]) add(v T) {
	switch {
	case len(k.head) < k.headCap:
		k.head = append(k.head, v)
	case len(k.tail) < k.tailCap:
		k.tail = append(k.tail, v)
	default:
		k.tail[k.off] = v
		k.off = (k.off + 1) % k.tailCap
		k.dropped++
	}
}

func (k *keep[T]) list() []T {
	if len(k.head)+len(k.tail) == 0 {
		return nil
	}
	out := make([]T, 0, len(k.head)+len(k.tail))
	out = append(out, k.head...)
	out = append(out, k.tail[k.off:]...)
	return append(out, k.tail[:k.off]...)
}
