package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
)

var updateContract = flag.Bool("update", false, "rewrite "+contractPath+" from the host's capability objects")

// contractPath is the description of the host API that the SDK's own
// tests hold the TypeScript side to.
const contractPath = "sdk/contract.json"

// contractTypesPath is contract.json's object types as the SDK's public
// TypeScript types (see typesTS).
const contractTypesPath = "sdk/contract_types.ts"

// contractRegen is how to rewrite the contract once the host API changed.
const contractRegen = "go test ./runner -run TestContractIsCurrent -update"

// contractUnions spells out the parameters and results that a Go type
// cannot: what a capnweb.Value (or any) slot takes, keyed by
// "capability.method#n" for the n-th parameter (from 1) or
// "capability.method#result". The types it names are described too. The
// test fails on an any slot missing here, and on an entry no slot uses.
var contractUnions = map[string]struct {
	shape string
	types []reflect.Type
}{
	"config.get#result":      {shape: "any"},
	"config.set#2":           {shape: "any"},
	"context.result#1":       {shape: "any"},
	"context.payload#result": {shape: "any"},
	"pageJs.evaluate#3":      {shape: "any[]"},
	"pageJs.evaluate#result": {shape: "any"},
	"tabs.triggered#result":  {shape: "TabInfo | undefined"},
	"tab.waitFor#2":          {shape: "string | Locator"},
	"forms.select#3":         {shape: "string | string[]"},
	"forms.select#result":    {shape: "string | string[]"},
	"forms.onDialog#2": {shape: `"accept" | "dismiss" | DialogAnswer | DialogAnswers`,
		types: []reflect.Type{reflect.TypeFor[dialogAnswer](), reflect.TypeFor[dialogAnswers]()}},
	"DialogAnswers.alert":        {shape: dialogAnswerShape},
	"DialogAnswers.confirm":      {shape: dialogAnswerShape},
	"DialogAnswers.prompt":       {shape: dialogAnswerShape},
	"DialogAnswers.beforeunload": {shape: dialogAnswerShape},
}

const dialogAnswerShape = `"accept" | "dismiss" | DialogAnswer`

// contractDoc is runner/sdk/contract.json: every capability's methods,
// each with its parameters' and result's shapes, and the object types
// they name. Shapes are written as TypeScript types: a struct by its Go
// name, described under types; "bytes" is a Uint8Array, "function" a
// function passed by reference, "void" no result.
type contractDoc struct {
	Comment      string                               `json:"//"`
	Capabilities map[string]map[string]contractMethod `json:"capabilities"`
	// Types lists each object type's keys in order with their shapes.
	// In a request every key is optional (absent is the zero value); in a
	// result every key is present.
	Types map[string]*capnweb.Object `json:"types"`
	// Whole lists the request slots ("Type.key", "capability.method#n")
	// whose number must be a whole one, as capnweb decodes a Go integer:
	// the testing kit refuses the rest as the host does.
	Whole []string `json:"whole"`
	// APIs is what scripts and errors call the methods ("forms.fill")
	// that are not called "capability.method" (tab.fill).
	APIs map[string]string `json:"apis"`
	// TargetHint is what the host adds to a refused target (targetHint).
	TargetHint string `json:"targetHint"`
}

type contractMethod struct {
	Params []string `json:"params"`
	Result string   `json:"result"`
}

// describer builds a contractDoc by reflection.
type describer struct {
	doc   contractDoc
	named map[string]reflect.Type // type name → the type, to catch two types of one name
	used  map[string]bool         // contractUnions entries used
	// results are the types a method's result holds, whose keys are all
	// present.
	results map[string]bool
	errs    []string
}

func newDescriber() *describer {
	return &describer{
		doc: contractDoc{
			Comment:      "The host API scripts call, generated from runner's capability objects by " + contractRegen + "; do not edit. See contractDoc in runner/contract_test.go.",
			Capabilities: map[string]map[string]contractMethod{},
			Types:        map[string]*capnweb.Object{},
			APIs:         map[string]string{},
			TargetHint:   targetHint,
		},
		named:   map[string]reflect.Type{},
		used:    map[string]bool{},
		results: map[string]bool{},
	}
}

var (
	ctxType  = reflect.TypeFor[context.Context]()
	errType  = reflect.TypeFor[error]()
	stubType = reflect.TypeFor[*capnweb.Stub]()
	strict   = reflect.TypeFor[capnweb.StrictArgs]()
)

// capability describes obj's methods as capnweb exposes them: the
// method table's rows of cap, each by its name on the wire, with an
// optional leading context. A method the table lacks, and a row obj
// lacks, is an error.
func (d *describer) capability(cap string, obj any) {
	t := reflect.TypeOf(obj)
	out := map[string]contractMethod{}
	for id := range methodID(methodCount) {
		row := &methods[id]
		if string(row.cap) != cap {
			continue
		}
		m, ok := t.MethodByName(row.name)
		if !ok {
			d.errs = append(d.errs, fmt.Sprintf("%s has no method %s, which the table's row of %s names", t, row.name, row.api))
			continue
		}
		name := row.wire()
		key := cap + "." + name
		ft := m.Type
		var cm contractMethod
		if row.api != key {
			d.doc.APIs[key] = row.api
		}
		cm.Params = []string{}
		for j := 1; j < ft.NumIn(); j++ {
			in := ft.In(j)
			if j == 1 && in == ctxType {
				continue
			}
			cm.Params = append(cm.Params, d.shape(fmt.Sprintf("%s#%d", key, len(cm.Params)+1), in, false))
		}
		switch {
		case ft.NumOut() == 0, ft.NumOut() == 1 && ft.Out(0) == errType:
			cm.Result = "void"
		case ft.NumOut() == 1, ft.NumOut() == 2 && ft.Out(1) == errType:
			cm.Result = d.shape(key+"#result", ft.Out(0), true)
		default:
			d.errs = append(d.errs, fmt.Sprintf("%s: results %v are not (), (error), (T) or (T, error): scripts cannot call it", key, ft))
		}
		out[name] = cm
	}
	for i := range t.NumMethod() {
		m := t.Method(i)
		if m.Name == "ArgError" && t.Implements(strict) {
			continue // capnweb's hook, not callable
		}
		if _, ok := out[capnweb.JSName(m.Name)]; !ok {
			d.errs = append(d.errs, fmt.Sprintf("%s.%s has no row in the method table (methods.go)", cap, capnweb.JSName(m.Name)))
		}
	}
	d.doc.Capabilities[cap] = out
}

// shape writes t as a TypeScript type; slot names it for contractUnions.
func (d *describer) shape(slot string, t reflect.Type, result bool) string {
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		u, ok := contractUnions[slot]
		if !ok {
			d.errs = append(d.errs, fmt.Sprintf("%s takes any value: say what in contractUnions", slot))
			return "any"
		}
		d.used[slot] = true
		for _, ut := range u.types {
			d.shape("", ut, result)
		}
		return u.shape
	}
	switch t {
	case stubType:
		return "function"
	case reflect.TypeFor[[]byte]():
		return "bytes"
	}
	if t.Kind() == reflect.Slice {
		if e := t.Elem(); e.Kind() == reflect.Interface && e.NumMethod() == 0 {
			return d.shape(slot, e, result) // a list of anything: the union says
		}
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !result && slot != "" && !slices.Contains(d.doc.Whole, slot) {
			d.doc.Whole = append(d.doc.Whole, slot)
		}
		return "number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !result {
			// capnweb wants "a whole number, not negative": the kit's table says no such thing.
			d.errs = append(d.errs, fmt.Sprintf("%s: an unsigned number in a request; take an int", slot))
		}
		return "number"
	case reflect.Slice:
		return d.shape("", t.Elem(), result) + "[]"
	case reflect.Map:
		return "Record<string, " + d.shape("", t.Elem(), result) + ">"
	case reflect.Pointer:
		if result {
			return d.shape(slot, t.Elem(), result) + " | null" // nil goes out null
		}
		return d.shape(slot, t.Elem(), result) // absent, in a request
	case reflect.Struct:
		// Request types are unexported in Go (no host needs them) and
		// named as the SDK's TypeScript names them.
		name := tsName(t)
		if result {
			d.results[name] = true
		}
		if prev, ok := d.named[name]; ok && prev != t {
			d.errs = append(d.errs, fmt.Sprintf("two types are called %s (%s and %s): the contract names types by name", name, prev, t))
			return name
		}
		if _, ok := d.named[name]; !ok {
			d.named[name] = t
			fields := &capnweb.Object{}
			for _, f := range requestFields(t) {
				fields.Set(f.Name, d.shape(name+"."+f.Name, f.Type, result))
			}
			d.doc.Types[name] = fields
		}
		return name
	}
	d.errs = append(d.errs, fmt.Sprintf("%s: no shape for %s", slot, t))
	return t.String()
}

// requestField is one key of a request or result object: its wire name
// and its type.
type requestField struct {
	Name string
	Type reflect.Type
}

// requestFields lists the keys of struct type t as scripts see them, in
// declaration order: the exported fields (those of embedded structs
// included, as capnweb sends them), each named by its json tag or else
// its Go name in lowerCamel case; a field tagged json:"-" has none.
// TestRequestFieldNames holds it to the keys capnweb decodes.
func requestFields(t reflect.Type) []requestField {
	var out []requestField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = capnweb.JSName(f.Name)
		}
		out = append(out, requestField{Name: name, Type: f.Type})
	}
	return out
}

// describe describes every capability object of objs, and writes that as
// the contract file.
func describe(objs map[permissions.Capability]any) (*describer, []byte) {
	d := newDescriber()
	caps := slices.Sorted(func(yield func(permissions.Capability) bool) {
		for c := range objs {
			if !yield(c) {
				return
			}
		}
	})
	for _, c := range caps {
		d.capability(string(c), objs[c])
	}
	return d, d.doc.marshal()
}

// marshal writes the contract one method and one key per line, sorted,
// as deno fmt leaves it.
func (c contractDoc) marshal() []byte {
	str := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"//\": %s,\n  \"capabilities\": {\n", str(c.Comment))
	caps := slices.Sorted(maps.Keys(c.Capabilities))
	for i, cap := range caps {
		fmt.Fprintf(&b, "    %s: {\n", str(cap))
		names := slices.Sorted(maps.Keys(c.Capabilities[cap]))
		for j, name := range names {
			m := c.Capabilities[cap][name]
			params := make([]string, len(m.Params))
			for k, p := range m.Params {
				params[k] = str(p)
			}
			fmt.Fprintf(&b, "      %s: { \"params\": [%s], \"result\": %s }%s\n", str(name), strings.Join(params, ", "), str(m.Result), comma(j, len(names)))
		}
		fmt.Fprintf(&b, "    }%s\n", comma(i, len(caps)))
	}
	b.WriteString("  },\n  \"types\": {\n")
	types := slices.Sorted(maps.Keys(c.Types))
	for i, name := range types {
		fmt.Fprintf(&b, "    %s: {\n", str(name))
		keys := c.Types[name].Keys()
		for j, k := range keys {
			v, _ := c.Types[name].Get(k)
			fmt.Fprintf(&b, "      %s: %s%s\n", str(k), str(fmt.Sprint(v)), comma(j, len(keys)))
		}
		fmt.Fprintf(&b, "    }%s\n", comma(i, len(types)))
	}
	whole := make([]string, len(c.Whole))
	for i, w := range slices.Sorted(slices.Values(c.Whole)) {
		whole[i] = str(w)
	}
	b.WriteString("  },\n  \"apis\": {\n")
	apis := slices.Sorted(maps.Keys(c.APIs))
	for i, k := range apis {
		fmt.Fprintf(&b, "    %s: %s%s\n", str(k), str(c.APIs[k]), comma(i, len(apis)))
	}
	fmt.Fprintf(&b, "  },\n  \"whole\": [%s],\n  \"targetHint\": %s\n}\n", strings.Join(whole, ", "), str(c.TargetHint))
	return []byte(b.String())
}

// tsName is the name the contract gives struct type t.
func tsName(t reflect.Type) string { return strings.ToUpper(t.Name()[:1]) + t.Name()[1:] }

// typesTS writes the contract's object types as the SDK's public
// TypeScript interfaces, sorted, as deno fmt leaves them, documented and
// narrowed by tsTypes. A struct that embeds another described one extends
// it. A request's keys are optional unless tsTypes requires them; a
// result's are all present.
func (d *describer) typesTS() []byte {
	var b strings.Builder
	b.WriteString("// Code generated by " + contractRegen + "; DO NOT EDIT.\n\n" +
		"// The object types of the host API as " + contractPath[len("sdk/"):] + " describes them, documented for\n" +
		"// scripts from tsTypes (runner/contract.go): browser.ts exports them under the names scripts use.\n\n" +
		"import type { Target } from \"./browser.ts\";\n")
	for name, tt := range tsTypes {
		if _, ok := d.named[name]; !ok {
			d.errs = append(d.errs, fmt.Sprintf("tsTypes has %s, which is no type of the contract", name))
		}
		for k := range tt.fields {
			if _, ok := d.doc.Types[name].Get(k); !ok && d.doc.Types[name] != nil {
				d.errs = append(d.errs, fmt.Sprintf("tsTypes has %s.%s, which the Go type does not have", name, k))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.doc.Types)) {
		t, tt := d.named[name], tsTypes[name]
		own := requestFields(t)
		head := "export interface " + name
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct && d.named[tsName(f.Type)] == f.Type {
				head += " extends " + tsName(f.Type)
				own = own[len(requestFields(f.Type)):]
			}
		}
		b.WriteString("\n" + jsDoc("", tt.doc) + head + " {\n")
		for _, f := range own {
			tf := tt.fields[f.Name]
			shape, _ := d.doc.Types[name].Get(f.Name)
			if tf.ts != "" {
				shape = tf.ts
			}
			opt := "?"
			if tf.required || d.results[name] {
				opt = ""
			}
			line := fmt.Sprintf("  %s%s: %v;", f.Name, opt, shape)
			if len(line) > 120 {
				// As deno fmt breaks a long union: a member a line.
				line = fmt.Sprintf("  %s%s:\n    | %s;", f.Name, opt, strings.ReplaceAll(fmt.Sprint(shape), " | ", "\n    | "))
			}
			b.WriteString(jsDoc("  ", tf.doc) + line + "\n")
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// jsDoc writes doc as a JSDoc comment at indent, on one line when it fits
// deno fmt's 120 columns, else wrapped; "" for none.
func jsDoc(indent, doc string) string {
	if doc == "" {
		return ""
	}
	if one := indent + "/** " + doc + " */\n"; len(one) <= 121 && !strings.Contains(doc, "\n") {
		return one
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for i, para := range strings.Split(doc, "\n\n") {
		if i > 0 {
			b.WriteString(indent + " *\n")
		}
		line := ""
		for _, w := range strings.Fields(para) {
			if line != "" && len(indent)+3+len(line)+1+len(w) > 80 {
				b.WriteString(indent + " * " + line + "\n")
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		b.WriteString(indent + " * " + line + "\n")
	}
	b.WriteString(indent + " */\n")
	return b.String()
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}

// hostObjects is every capability object a run gets.
func hostObjects() map[permissions.Capability]any {
	out := map[permissions.Capability]any{}
	for _, c := range hostAPI {
		out[c.cap] = c.build(nil)
	}
	return out
}

// TestContractIsCurrent describes the host's capability objects by
// reflection and compares that with the committed contract, which the
// SDK's deno tests hold the TypeScript fake host and the SDK's calls to.
// -update rewrites it.
func TestContractIsCurrent(t *testing.T) {
	d, got := describe(hostObjects())
	require.Empty(t, d.errs)
	gen, err := tabGenTS()
	require.NoError(t, err)
	for slot := range contractUnions {
		assert.True(t, d.used[slot], "contractUnions has %s, which is no any slot of the host API", slot)
	}
	if *updateContract {
		require.NoError(t, os.WriteFile(contractPath, got, 0o644))
		require.NoError(t, os.WriteFile(contractTypesPath, d.typesTS(), 0o644))
		require.Empty(t, d.errs)
		require.NoError(t, os.WriteFile(tabGenPath, gen, 0o644))
		return
	}
	raw, err := os.ReadFile(contractPath)
	require.NoError(t, err)
	var committed contractDoc
	require.NoError(t, json.Unmarshal(raw, &committed), "%s is not a contract; rewrite it with\n\t%s", contractPath, contractRegen)
	if want := committed.marshal(); !bytes.Equal(want, got) {
		t.Fatalf("%s is stale: the host API changed:\n\t%s\nrewrite it with\n\t%s\nthen make the SDK, its fake host (testing.ts) and the Go fake (sdk_test.go) agree",
			contractPath, strings.Join(contractDiff(committed, d.doc, "the committed file", "the host"), "\n\t"), contractRegen)
	}
	ts, err := os.ReadFile(contractTypesPath)
	require.NoError(t, err)
	assert.Equal(t, string(d.typesTS()), string(ts), "%s is stale: rewrite it with\n\t%s", contractTypesPath, contractRegen)
	assert.Empty(t, d.errs)
	tabs, err := os.ReadFile(tabGenPath)
	require.NoError(t, err)
	assert.Equal(t, string(gen), string(tabs), "%s is stale: rewrite it with\n\t%s", tabGenPath, contractRegen)
}

// contractDiff lists how got differs from want, a line per method or
// type; wantName and gotName name the two in it.
func contractDiff(want, got contractDoc, wantName, gotName string) []string {
	var out []string
	for _, cap := range slices.Sorted(maps.Keys(mergeKeys(want.Capabilities, got.Capabilities))) {
		w, g := want.Capabilities[cap], got.Capabilities[cap]
		for _, name := range slices.Sorted(maps.Keys(mergeKeys(w, g))) {
			wm, inW := w[name]
			gm, inG := g[name]
			switch {
			case !inG:
				out = append(out, fmt.Sprintf("%s.%s is in %s, not in %s", cap, name, wantName, gotName))
			case !inW:
				out = append(out, fmt.Sprintf("%s.%s is in %s, not in %s: %v → %s", cap, name, gotName, wantName, gm.Params, gm.Result))
			case !slices.Equal(wm.Params, gm.Params) || wm.Result != gm.Result:
				out = append(out, fmt.Sprintf("%s.%s is %v → %s in %s, %v → %s in %s", cap, name, wm.Params, wm.Result, wantName, gm.Params, gm.Result, gotName))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mergeKeys(want.Types, got.Types))) {
		w, g := want.Types[name], got.Types[name]
		if wj, gj := mustJSON(w), mustJSON(g); wj != gj {
			out = append(out, fmt.Sprintf("type %s is %s in %s, %s in %s", name, wj, wantName, gj, gotName))
		}
	}
	return out
}

func mergeKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// TestContractGoFake holds the fake host of the SDK tests to the contract:
// the same capabilities, methods and shapes as the real one.
func TestContractGoFake(t *testing.T) {
	h := &fakeSDKHost{}
	d, _ := describe(h.apis())
	require.Empty(t, d.errs)
	want, err := os.ReadFile(contractPath)
	require.NoError(t, err)
	var w contractDoc
	require.NoError(t, json.Unmarshal(want, &w))
	g := d.doc
	assert.Empty(t, contractDiff(w, g, contractPath, "the Go fake of sdk_test.go"))
}

// TestContractResultKeys checks that the objects a script receives have
// the keys the contract says: capnweb sends a struct by the same names.
func TestContractResultKeys(t *testing.T) {
	for _, v := range []any{TabInfo{}, cdp.Response{}, cdp.FieldState{}} {
		var names []string
		for _, f := range requestFields(reflect.TypeOf(v)) {
			names = append(names, f.Name)
		}
		switch v.(type) {
		case TabInfo:
			assert.Equal(t, []string{"id", "url", "title"}, names)
		case cdp.Response:
			assert.Equal(t, []string{"status", "url"}, names)
		case cdp.FieldState:
			assert.Equal(t, []string{"value", "invalid", "validationMessage", "errorText"}, names)
		}
	}
}

// memTransport is one end of an in-memory capnweb.Transport pair.
type memTransport struct {
	in, out chan []byte
	done    chan struct{}
	peer    *memTransport
	once    sync.Once
}

func memTransports() (*memTransport, *memTransport) {
	a2b, b2a := make(chan []byte, 64), make(chan []byte, 64)
	a := &memTransport{in: b2a, out: a2b, done: make(chan struct{})}
	b := &memTransport{in: a2b, out: b2a, done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (c *memTransport) Send(ctx context.Context, msg []byte) error {
	select {
	case c.out <- append([]byte(nil), msg...):
		return nil
	case <-c.done:
	case <-c.peer.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return &capnweb.CloseError{Code: 1006}
}

func (c *memTransport) Recv(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
	case <-c.peer.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, &capnweb.CloseError{Code: 1006}
}

func (c *memTransport) Close(error) error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// callOver calls method of obj as a script does, through a capnweb
// session: arguments are decoded by capnweb, as for a run.
func callOver(t *testing.T, obj any, method string, args ...any) (any, error) {
	t.Helper()
	a, b := memTransports()
	server, err := capnweb.NewSession(a, obj, nil)
	require.NoError(t, err)
	client, err := capnweb.NewSession(b, nil, nil)
	require.NoError(t, err)
	main := client.Main()
	defer func() {
		main.Release()
		client.Close()
		server.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return main.CallMethod(ctx, method, args...)
}

// A request object with a key the host does not take, or a value of the
// wrong type, is refused with code invalid and a message naming the key;
// undefined and null count as absent. The calls go through capnweb, which
// decodes the facades' arguments strictly.
func TestRequestsRefuseBadKeys(t *testing.T) {
	m := &Manager{}
	m.cfg.Host = Host{UI: newFakeHost(), Tabs: struct{ Tabs }{}}
	r := newRun(m, "run-1", Request{Script: "/s.ts"})
	tab, forms, tabs, ui := &tabAPI{r}, &formsAPI{r}, &tabsAPI{r}, &uiAPI{r}
	obj := capnweb.NewObject
	label := obj("label", "Email")
	for _, c := range []struct {
		on     any
		method string
		args   []any
		want   string
		// props are properties the refusal must have (nil: must not).
		props map[string]any
	}{
		{tab, "goto", []any{"t1", "https://x.example/", obj("waitUntil", "load", "wait", 5.0)},
			`tab.goto: unknown key "wait" in options (it takes waitUntil, timeout)`,
			map[string]any{"argument": 2.0, "path": "", "key": "wait", "takes": []any{"waitUntil", "timeout"}, "closest": nil}},
		{tab, "goto", []any{"t1", "https://x.example/", obj("timeout", "5000")},
			"tab.goto: options.timeout must be a number, not a string",
			map[string]any{"argument": 2.0, "path": ".timeout", "want": "a number", "got": "a string", "key": nil}},
		{tab, "goto", []any{"t1", "https://x.example/", "fast"},
			"tab.goto: options must be an object, not a string", nil},
		{tab, "goto", []any{"t1", 5.0},
			"tab.goto: argument 1 must be a string, not a number",
			map[string]any{"argument": 1.0, "path": "", "want": "a string", "got": "a number"}},
		// The SDK sends the tab's ID; a script never passes it.
		{tab, "goto", []any{5.0, "https://x.example/"},
			"tab.goto: the tab's ID must be a string, not a number",
			map[string]any{"argument": nil, "path": "", "want": "a string"}},
		{forms, "fill", []any{"t1", label, true},
			"tab.fill: argument 2 must be a string, not a boolean",
			map[string]any{"argument": 2.0, "path": "", "want": "a string", "got": "a boolean"}},
		{tab, "waitFor", []any{"t1", obj("label", "x", "exactly", true)},
			`tab.waitFor: unknown key "exactly" in target (it takes label, placeholder, name, role, text, selector, testId, ref, exact, frame, within, hasText, has, nth); a target is one of`, nil},
		{tab, "waitFor", []any{"t1", obj("label", "x", "text", "y")},
			"tab.waitFor: the target names more than one way to find the element; a target is one of", nil},
		{tab, "text", []any{"t1", obj("lable", "Email")},
			`tab.text: unknown key "lable" in target`,
			map[string]any{"argument": 1.0, "path": "", "key": "lable", "closest": "label"}},
		{tab, "waitFor", []any{"t1", obj("lable", "Email")},
			`tab.waitFor: unknown key "lable" in target`,
			map[string]any{"argument": 1.0, "path": "", "key": "lable", "closest": "label"}},
		{forms, "fill", []any{"t1", obj("label", 5.0), "x"},
			"tab.fill: target.label must be a string, not a number; a target is one of",
			map[string]any{"argument": 1.0, "path": ".label", "want": "a string", "got": "a number"}},
		{forms, "fill", []any{"t1", obj(), "x"},
			"tab.fill: the target names no element; a target is one of", nil},
		{forms, "fill", []any{"t1", obj("text", "Go", "exact", true), "x"},
			`tab.fill: "exact" goes with {role, name} or {label}; a target is one of`, nil},
		{forms, "click", []any{"t1", label, obj("parts", obj("trigger", 3.0))},
			"tab.click: options.parts.trigger must be a string, not a number", nil},
		{forms, "click", []any{"t1", label, obj("dryrun", true)},
			`tab.click: unknown key "dryrun" in options (it takes dryRun, parts, timeout, modifiers, position, button, clickCount)`,
			map[string]any{"argument": 2.0, "key": "dryrun", "closest": "dryRun",
				"takes": []any{"dryRun", "parts", "timeout", "modifiers", "position", "button", "clickCount"}}},
		{forms, "press", []any{"t1", "Enter", obj("target", obj("label", "x", "bogus", "y"))},
			`tab.press: unknown key "bogus" in options.target (it takes label, placeholder, name, role, text, selector, testId, ref, exact, frame, within, hasText, has, nth); a target is one of`,
			map[string]any{"argument": 2.0, "path": ".target", "key": "bogus", "closest": nil}},
		{forms, "press", []any{"t1", "Enter", obj("modifiers", []any{"Shift", 1.0})},
			"tab.press: options.modifiers[1] must be a string, not a number",
			map[string]any{"argument": 2.0, "path": ".modifiers[1]", "want": "a string", "got": "a number"}},
		{forms, "press", []any{"t1", "Enter", obj("target", obj())},
			"tab.press: the target names no element", nil},
		{forms, "onDialog", []any{"t1", obj("confirm", "accept", "bogus", "accept")},
			`tab.onDialog: unknown key "bogus" in the answers by type (it takes alert, confirm, prompt, beforeunload)`,
			map[string]any{"argument": 1.0, "path": "", "key": "bogus", "takes": []any{"alert", "confirm", "prompt", "beforeunload"}}},
		{forms, "onDialog", []any{"t1", obj("accept", true, "text", "x")},
			`tab.onDialog: unknown key "text" in answer (it takes accept, promptText)`,
			map[string]any{"argument": 1.0, "path": "", "key": "text", "closest": nil}},
		{forms, "onDialog", []any{"t1", obj("confirm", obj("accept", true, "promptTxt", "x"))},
			`tab.onDialog: confirm: unknown key "promptTxt" in answer (it takes accept, promptText)`,
			map[string]any{"argument": 1.0, "path": ".confirm", "key": "promptTxt", "closest": "promptText"}},
		{forms, "onDialog", []any{"t1", "maybe"},
			`tab.onDialog: unknown answer "maybe"`,
			map[string]any{"argument": nil, "key": nil}},
		{tabs, "open", []any{"https://x.example/", obj("background", "yes")},
			"tabs.open: options.background must be true or false, not a string",
			map[string]any{"argument": 2.0, "path": ".background", "want": "true or false", "got": "a string"}},
		{tabs, "open", []any{"https://x.example/", obj("backgroud", true)},
			`tabs.open: unknown key "backgroud" in options (it takes background, timeout, seq)`,
			map[string]any{"argument": 2.0, "key": "backgroud", "closest": "background"}},
		{tabs, "open", []any{"https://x.example/", obj("seq", 1.5)},
			"tabs.open: options.seq must be a whole number, not a number", nil},
		{ui, "notify", []any{"hi", obj("level", 3.0)},
			"ui.notify: options.level must be a string, not a number", nil},
		{ui, "open", []any{"/notes.md", obj("pane", "left")},
			`ui.open: unknown key "pane" in options (it takes split)`,
			map[string]any{"argument": 2.0, "key": "pane", "takes": []any{"split"}, "closest": nil}},
		{ui, "notify", []any{"hi", obj("levle", "info")},
			`ui.notify: unknown key "levle" in options (it takes level)`,
			map[string]any{"argument": 2.0, "key": "levle", "closest": "level"}},
	} {
		_, err := callOver(t, c.on, c.method, c.args...)
		var re *capnweb.RemoteError
		if assert.ErrorAs(t, err, &re, c.want) {
			assert.Equal(t, string(errcode.Invalid), re.Props["code"], c.want)
			assert.Equal(t, capnweb.NameTypeError, re.Name, c.want)
			assert.Contains(t, re.Message, c.want)
			for k, v := range c.props {
				if v == nil {
					assert.NotContains(t, re.Props, k, c.want)
				} else {
					assert.Equal(t, v, re.Props[k], "%s: %s", k, c.want)
				}
			}
		}
	}

	// A function where data goes is not data, as everywhere.
	fn := capnweb.Func(func(context.Context, []any) (any, error) { return nil, nil })
	_, err := callOver(t, ui, "notify", "hi", obj("level", fn))
	var re *capnweb.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, string(errcode.NotSerializable), re.Props["code"])
	assert.Equal(t, "ui.notify: options holds a function; only data (JSON) reaches the app", re.Message)

	// Absent keys: the call goes on to the tab, which the run never resolved.
	_, err = callOver(t, tab, "goto", "t1", "https://x.example/", obj("timeout", capnweb.Undefined{}, "bogus", nil))
	require.ErrorAs(t, err, &re)
	assert.Equal(t, string(errcode.NotFound), re.Props["code"], "%v", err)
	_, err = callOver(t, forms, "fill", "t1", obj("label", "Email", "frame", nil), "x", obj("parts", nil))
	require.ErrorAs(t, err, &re)
	assert.Equal(t, string(errcode.NotFound), re.Props["code"], "%v", err)
	_, err = callOver(t, forms, "click", "t1", label, nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, string(errcode.NotFound), re.Props["code"], "%v", err)
}

// The keys the contract lists for a request type are the ones capnweb
// decodes it by, embedded fields flattened.
func TestRequestFieldNames(t *testing.T) {
	d, _ := describe(hostObjects())
	require.NotEmpty(t, d.named)
	for name, rt := range d.named {
		var want []string
		for _, f := range requestFields(rt) {
			want = append(want, f.Name)
		}
		err := capnweb.Decode(capnweb.NewObject("\x00no such key", true), reflect.New(rt).Interface())
		var de *capnweb.DecodeError
		if assert.ErrorAs(t, err, &de, name) {
			assert.Equal(t, want, de.Takes, name)
		}
	}
	var names []string
	for _, f := range requestFields(reflect.TypeFor[pressOptions]()) {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"dryRun", "parts", "timeout", "target", "modifiers"}, names, "embedded fields are flattened")
	assert.Equal(t, "urlFor", capnweb.JSName("URLFor"))
	assert.Equal(t, "id", capnweb.JSName("ID"))
	assert.Equal(t, "ok", capnweb.JSName("OK"))
	assert.True(t, strings.HasPrefix(targetHint, "a target is one of"))
}

// tabGenPath is the Tab wrappers written from tsMethods.
const tabGenPath = "sdk/tab_gen.ts"

// tabGenTS writes the Tab methods of tsMethods as the class TabCalls,
// as deno fmt leaves it: each checks its arguments with browser.ts's
// checks, calls the host as browser.ts's hostCall does and returns the
// answer.
func tabGenTS() ([]byte, error) {
	var body strings.Builder
	types, funcs := map[string]bool{}, map[string]bool{"hostCall": true}
	ident := regexp.MustCompile(`\b[A-Z]\w*`)
	call := regexp.MustCompile(`\b([a-z]\w*)\(`)
	for id := range methodID(methodCount) {
		m, ok := tsMethods[id]
		if !ok {
			continue
		}
		row := &methods[id]
		if row.cap != capTab && row.cap != capForms {
			return nil, fmt.Errorf("tsMethods has %s, which is no method of a tab", row.api)
		}
		var params, args []string
		for _, p := range m.params {
			for _, t := range ident.FindAllString(p.ts, -1) {
				types[t] = true
			}
			decl := p.name + ": " + p.ts
			if p.def != "" {
				decl = p.name + ": " + p.ts + " = " + p.def
				if p.ts == "boolean" {
					decl = p.name + " = " + p.def
				}
			}
			params = append(params, decl)
			arg := p.name
			if p.check != "" {
				arg = fmt.Sprintf(p.check, p.name)
				for _, f := range call.FindAllStringSubmatch(arg, -1) {
					funcs[f[1]] = true
				}
			}
			args = append(args, arg)
		}
		for _, t := range ident.FindAllString(m.result, -1) {
			types[t] = true
		}
		typeArg := "<" + m.result + ">"
		switch {
		case m.answer != "":
			typeArg = "<unknown>"
			for _, f := range call.FindAllStringSubmatch(m.answer, -1) {
				funcs[f[1]] = true
			}
		case m.result == "void":
			typeArg = ""
		}
		hostArgs := append([]string{strconv.Quote(string(row.cap)), strconv.Quote(row.wire()), "api", "this.id", "this.id"}, args...)
		hostCall := func(prefix string) string { return tsCall("    "+prefix, "hostCall"+typeArg, hostArgs) }
		body.WriteString("\n" + jsDoc("  ", m.doc))
		sig := fmt.Sprintf("%s(%s): Promise<%s>", row.wire(), strings.Join(params, ", "), m.result)
		if len(m.params) == 0 && m.answer == "" {
			// Nothing to check or map: the host's promise as it is.
			fmt.Fprintf(&body, "  %s {\n    const api = %q;\n%s  }\n", sig, row.api, hostCall("return "))
			continue
		}
		fmt.Fprintf(&body, "  async %s {\n    const api = %q;\n", sig, row.api)
		switch {
		case m.answer != "":
			fmt.Fprintf(&body, "%s    return %s;\n", hostCall("const answer = await "), fmt.Sprintf(m.answer, "answer"))
		case m.result == "void":
			body.WriteString(hostCall("await "))
		default:
			body.WriteString(hostCall("return await "))
		}
		body.WriteString("  }\n")
	}
	delete(types, "Uint8Array")
	expectations := expectationsTS()
	funcs["textOf"], types["ExpectOptions"], types["ExpectRequest"] = true, true, true
	// Sorted as deno fmt sorts them: by name, case aside (then upper case
	// first), types among values.
	var imports []string
	for f := range funcs {
		imports = append(imports, f)
	}
	for t := range types {
		imports = append(imports, "type "+t)
	}
	name := func(s string) string { return strings.ToLower(strings.TrimPrefix(s, "type ")) }
	slices.SortFunc(imports, func(a, b string) int {
		if c := strings.Compare(name(a), name(b)); c != 0 {
			return c
		}
		return strings.Compare(strings.TrimPrefix(a, "type "), strings.TrimPrefix(b, "type "))
	})
	var b strings.Builder
	b.WriteString("// Code generated by " + contractRegen + "; DO NOT EDIT.\n\n" +
		"// The Tab methods that check their arguments, call the host and return its\n" +
		"// answer, written from the method table's tsMethods (runner/methods.go).\n" +
		"// Only browser.ts imports this module, and its Tab extends TabCalls: the\n" +
		"// two import each other, so nothing here may use browser.ts's exports\n" +
		"// before a method runs.\n\n")
	b.WriteString("import {\n  " + strings.Join(imports, ",\n  ") + ",\n} from \"./browser.ts\";\n\n")
	b.WriteString("/** TabCalls are the methods of a Tab (see Tab) that ask the host one thing. */\n" +
		"export abstract class TabCalls {\n  /** The tab's ID, stable for the tab's lifetime. */\n  abstract readonly id: string;\n")
	b.WriteString(body.String())
	b.WriteString("}\n")
	b.WriteString(expectations)
	return []byte(b.String()), nil
}

// expectationsTS writes tsExpectations as the classes ExpectationCalls
// and PageExpectationCalls, which browser.ts's Expectations and
// PageExpectations extend: each check sends its kind, and its expected
// text or RegExp, through the class's check.
func expectationsTS() string {
	var b strings.Builder
	for _, page := range []bool{false, true} {
		class, of, api := "ExpectationCalls", "Expectations", "tab.expect(…)."
		if page {
			class, of, api = "PageExpectationCalls", "PageExpectations", "tab.expectPage()."
		}
		fmt.Fprintf(&b, "\n/** %s are the checks of %s (see %s) that send one kind and what it expects. */\n", class, of, of)
		fmt.Fprintf(&b, "export abstract class %s {\n  /** check sends req, with the timeout of opts, as %s do; api names the call. */\n", class, of)
		b.WriteString("  protected abstract check(api: string, req: ExpectRequest, opts: unknown): Promise<void>;\n")
		for _, e := range tsExpectations {
			if e.page != page {
				continue
			}
			b.WriteString("\n" + jsDoc("  ", e.doc))
			if e.param == "" {
				fmt.Fprintf(&b, "  async %s(opts: ExpectOptions = {}): Promise<void> {\n", e.name)
				fmt.Fprintf(&b, "    await this.check(%q, { kind: %q }, opts);\n  }\n", api+e.name, e.kind)
				continue
			}
			fmt.Fprintf(&b, "  async %s(%s: string | RegExp, opts: ExpectOptions = {}): Promise<void> {\n", e.name, e.param)
			fmt.Fprintf(&b, "    const api = %q;\n", api+e.name)
			fmt.Fprintf(&b, "    await this.check(api, { kind: %q, ...textOf(api, %q, %s) }, opts);\n  }\n", e.kind, e.what, e.param)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// tsCall writes the statement prefix fn(args); on one line, or, past
// deno fmt's 120 columns, an argument a line as deno fmt leaves it.
func tsCall(prefix, fn string, args []string) string {
	if one := prefix + fn + "(" + strings.Join(args, ", ") + ");"; len(one) <= 120 {
		return one + "\n"
	}
	indent := prefix[:len(prefix)-len(strings.TrimLeft(prefix, " "))]
	return prefix + fn + "(\n" + indent + "  " + strings.Join(args, ",\n"+indent+"  ") + ",\n" + indent + ");\n"
}
