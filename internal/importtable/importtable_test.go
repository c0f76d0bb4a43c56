package importtable

import (
	"regexp"
	"testing"
)

// The regular expressions the readers write out; the tests hold the two
// together.
var (
	pinRe    = regexp.MustCompile(`^jsr:(@[a-z0-9-]+/[a-z0-9-]+)@(\d+\.\d+\.\d+)$`)
	specRe   = regexp.MustCompile(`^jsr:/?(@[^/@]+/[^/@]+)(?:@([^/]*))?(/.*)?$`)
	schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)
)

var readerSeeds = []string{
	"", "jsr:", "jsr:@", "jsr:@std/fmt", "jsr:@std/fmt@1.0.8", "jsr:/@std/fmt@1.0.8/colors", "jsr:@std/fmt/colors",
	"jsr:@std/fmt@", "jsr:@std/fmt@1.0", "jsr:@std/fmt@1.0.8.9", "jsr:@std/fmt@01.0.8", "jsr:@Std/fmt@1.0.8",
	"jsr:@std/fmt@1.0.8/", "jsr:@std//fmt", "jsr:@/fmt", "jsr:@std/", "jsr:@std@x/fmt", "jsr:@std/fmt@@1",
	"jsr:@std/fmt/a\nb", "jsr:@std/fmt@1\n/x", "jsr:@std/f\nmt", "jsr://@std/fmt", "jsr:@std/fmt@1.0.8\n",
	"jsr:@std/fmt@1.0.x", "jsr:@std/fmt@1..8", "jsr:@s-d/f-t@0.0.0", "jsr:@std/fmt@1.0.8@1", "jsr:@std/fmt/@x",
	"a", "A1+.-", "1a", "+", "a b", "é", "c",
}

func checkReaders(t *testing.T, s string) {
	wantPin := pinRe.FindStringSubmatch(s)
	pin, ok := ParsePin(s)
	if ok != (wantPin != nil) || ok && (pin.Name != wantPin[1] || pin.Version != wantPin[2]) {
		t.Errorf("ParsePin(%q) = %v, %v; the expression says %q", s, pin, ok, wantPin)
	}
	wantSpec := specRe.FindStringSubmatch(s)
	name, version, ok := ParseSpec(s)
	if ok != (wantSpec != nil) || ok && (name != wantSpec[1] || version != wantSpec[2]) {
		t.Errorf("ParseSpec(%q) = %q, %q, %v; the expression says %q", s, name, version, ok, wantSpec)
	}
	if isScheme(s) != schemeRe.MatchString(s) {
		t.Errorf("isScheme(%q) = %v", s, isScheme(s))
	}
}

func TestReadersMatchTheirExpressions(t *testing.T) {
	for _, s := range readerSeeds {
		checkReaders(t, s)
	}
}

func FuzzReaders(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add(s)
	}
	f.Fuzz(checkReaders)
}
