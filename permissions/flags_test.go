package permissions

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func flagConfig(script string) FlagConfig {
	m := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(script))), "machinery")
	return FlagConfig{
		BridgeAddr: "127.0.0.1:40123",
		Bootstrap:  m + "/sdk/main.ts",
		SDKDir:     m + "/sdk",
		ConfigPath: m + "/sdk/deno.json",
	}
}

const privateDeny = "0.0.0.0/8,10.0.0.0/8,100.64.0.0/10,169.254.0.0/16,172.16.0.0/12,192.168.0.0/16"

func TestFlagsMatrix(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	c := flagConfig(script)
	loc := Location(mustParse(t, script, "// @permissions none\n"))
	base := func(extra ...string) []string {
		return append([]string{"--no-prompt", "--no-lock", "--config=" + c.ConfigPath, "--location=" + loc}, extra...)
	}
	lock := filepath.Dir(c.SDKDir) + "/std.lock"
	env := "--allow-env=TRANQUIL_CALL_SITES,TRANQUIL_ENTRY,TRANQUIL_RPC_TOKEN,TRANQUIL_RPC_URL,TRANQUIL_RUN_ID,TRANQUIL_SCRIPT_DIR,TRANQUIL_TRIGGER"
	read := "--allow-read=" + c.Bootstrap + "," + script + "," + c.SDKDir
	cases := []struct {
		header string
		cfg    func(*FlagConfig)
		want   []string
	}{
		{"none", nil, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--no-remote", "--cached-only")},
		{"browser clipboard forms page-js", nil, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--no-remote", "--cached-only")},
		{"net=api.github.com,*.example.com:443 env=HOME,AWS_*", nil, base(
			"--allow-net=127.0.0.1:40123,*.example.com:443,api.github.com",
			"--deny-net="+privateDeny+",[::1],[::]",
			env+",AWS_*,HOME", read, "--no-remote", "--cached-only")},
		{"read=a.txt,data write=out.md run=git," + jq + " import=esm.sh", nil, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read+","+filepath.Join(dir, "a.txt")+","+filepath.Join(dir, "data"),
			"--allow-write="+filepath.Join(dir, "out.md"),
			"--allow-run="+jq+",git",
			"--allow-import=esm.sh")},
		{"import=esm.sh", func(c *FlagConfig) { c.DefaultImports = []string{"modules.example:443"} }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--allow-import=modules.example:443,esm.sh")},
		{"none", func(c *FlagConfig) { c.DefaultImports = []string{"modules.example:443"} }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--allow-import=modules.example:443")},
		// DevTools endpoints are denied on every loopback address.
		{"net=localhost:3000", func(c *FlagConfig) { c.DenyLoopback = []string{"127.0.0.1:9222", "localhost:9333", "127.0.0.1:9222"} }, base(
			"--allow-net=127.0.0.1:40123,localhost:3000",
			"--deny-net="+privateDeny+",[::],"+
				"127.0.0.0/8:9222,0.0.0.0/8:9222,[::1]:9222,[::]:9222,"+
				"127.0.0.0/8:9333,0.0.0.0/8:9333,[::1]:9333,[::]:9333",
			env, read, "--no-remote", "--cached-only")},
		// An address inside a private range is carved out of it; the rest
		// of the range stays denied.
		{"net=192.168.1.10:8080", nil, base(
			"--allow-net=127.0.0.1:40123,192.168.1.10:8080",
			"--deny-net=0.0.0.0/8,10.0.0.0/8,100.64.0.0/10,169.254.0.0/16,172.16.0.0/12,"+
				"192.168.0.0/24,192.168.1.0/29,192.168.1.8/31,192.168.1.11/32,192.168.1.12/30,192.168.1.16/28,"+
				"192.168.1.32/27,192.168.1.64/26,192.168.1.128/25,192.168.2.0/23,192.168.4.0/22,192.168.8.0/21,"+
				"192.168.16.0/20,192.168.32.0/19,192.168.64.0/18,192.168.128.0/17,[::1],[::]",
			env, read, "--no-remote", "--cached-only")},
		{"net=[::1]:8080,[::]", nil, base(
			"--allow-net=127.0.0.1:40123,[::1]:8080,[::]",
			"--deny-net="+privateDeny,
			env, read, "--no-remote", "--cached-only")},
		// A JSR registry: its cached modules only, never a download, and
		// never deno's built-in import hosts.
		{"none", func(c *FlagConfig) { c.Registry = "127.0.0.1:4873" }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--allow-import=127.0.0.1:4873", "--cached-only")},
		{"import=esm.sh", func(c *FlagConfig) { c.Registry = "jsr.io" }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--allow-import=esm.sh,jsr.io")},
		// The registry's lock: frozen when the registry's cached modules
		// are all a run may load; no lock once a host is declared (a
		// frozen lock would refuse every module the host serves), nor
		// without a registry.
		{"none", func(c *FlagConfig) { c.Registry, c.Lock = "127.0.0.1:4873", lock }, append([]string{
			"--no-prompt", "--lock=" + lock, "--frozen", "--config=" + c.ConfigPath, "--location=" + loc,
			"--allow-net=127.0.0.1:40123",
			"--deny-net=" + privateDeny + ",[::1],[::]"},
			env, read, "--allow-import=127.0.0.1:4873", "--cached-only")},
		{"import=esm.sh", func(c *FlagConfig) { c.Registry, c.Lock = "jsr.io", lock }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--allow-import=esm.sh,jsr.io")},
		{"none", func(c *FlagConfig) { c.Lock = lock }, base(
			"--allow-net=127.0.0.1:40123",
			"--deny-net="+privateDeny+",[::1],[::]",
			env, read, "--no-remote", "--cached-only")},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			h := mustParse(t, script, "// @permissions "+tc.header+"\n")
			cfg := c
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			got, err := Flags(h, cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			again, err := Flags(h, cfg)
			require.NoError(t, err)
			assert.Equal(t, got, again, "deterministic")
			args, err := RunArgs(h, cfg)
			require.NoError(t, err)
			assert.Equal(t, "run", args[0])
			// The bootstrap is preloaded; the script is the main module.
			assert.Equal(t, []string{"--preload=" + cfg.Bootstrap, script}, args[len(args)-2:])
			assert.NoError(t, CheckFlags(got))
		})
	}
}

func TestFlagsPrivateRangeCarveCoversAllButTheAddress(t *testing.T) {
	script := scriptDir(t)
	h := mustParse(t, script, "// @permissions net=10.20.30.40,172.16.0.1\n")
	got, err := Flags(h, flagConfig(script))
	require.NoError(t, err)
	var deny string
	for _, f := range got {
		if v, ok := strings.CutPrefix(f, "--deny-net="); ok {
			deny = v
		}
	}
	require.NotEmpty(t, deny)
	assert.NotContains(t, strings.Split(deny, ","), "10.0.0.0/8")
	assert.NotContains(t, strings.Split(deny, ","), "172.16.0.0/12")
	assert.Contains(t, strings.Split(deny, ","), "192.168.0.0/16")
	// Count the addresses the carved prefixes cover: each range loses
	// exactly the one declared address.
	covered := map[string]uint64{}
	for _, e := range strings.Split(deny, ",") {
		if strings.HasPrefix(e, "10.") || strings.HasPrefix(e, "172.") {
			_, bits, _ := strings.Cut(e, "/")
			n := uint64(1) << (32 - atoi(t, bits))
			covered[e[:strings.Index(e, ".")]] += n
		}
	}
	assert.Equal(t, uint64(1<<24-1), covered["10"])
	assert.Equal(t, uint64(1<<20-1), covered["172"])
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9')
		n = n*10 + int(c-'0')
	}
	return n
}

func TestFlagsErrors(t *testing.T) {
	script := scriptDir(t)
	good := flagConfig(script)
	h := mustParse(t, script, "// @permissions none\n")
	bad := []struct {
		name string
		mod  func(*FlagConfig)
	}{
		{"bridge not loopback", func(c *FlagConfig) { c.BridgeAddr = "0.0.0.0:4000" }},
		{"bridge localhost name", func(c *FlagConfig) { c.BridgeAddr = "localhost:4000" }},
		{"bridge no port", func(c *FlagConfig) { c.BridgeAddr = "127.0.0.1" }},
		{"bridge port zero", func(c *FlagConfig) { c.BridgeAddr = "127.0.0.1:0" }},
		{"relative bootstrap", func(c *FlagConfig) { c.Bootstrap = "main.ts" }},
		{"comma in sdk", func(c *FlagConfig) { c.SDKDir = "/a,b" }},
		{"missing config", func(c *FlagConfig) { c.ConfigPath = "" }},
		{"deny not loopback", func(c *FlagConfig) { c.DenyLoopback = []string{"192.168.1.1:9222"} }},
		{"deny no port", func(c *FlagConfig) { c.DenyLoopback = []string{"127.0.0.1"} }},
		{"deny bridge", func(c *FlagConfig) { c.DenyLoopback = []string{"127.0.0.1:40123"} }},
		{"registry as a URL", func(c *FlagConfig) { c.Registry = "https://jsr.io/" }},
		{"registry list", func(c *FlagConfig) { c.Registry = "jsr.io,esm.sh" }},
		{"registry wildcard", func(c *FlagConfig) { c.Registry = "*.jsr.io" }},
		{"relative lock", func(c *FlagConfig) { c.Lock = "std.lock" }},
		{"comma in lock", func(c *FlagConfig) { c.Lock = "/a,b/std.lock" }},
	}
	for _, b := range bad {
		cfg := good
		b.mod(&cfg)
		_, err := Flags(h, cfg)
		assert.ErrorIs(t, err, ErrFlagConfig, b.name)
	}

	cfg := good
	cfg.DenyLoopback = []string{"127.0.0.1:9222"}
	for _, hdr := range []string{"net=127.0.0.1:9222", "net=localhost:9222", "net=[::1]:9222", "net=0.0.0.0:9222"} {
		h := mustParse(t, script, "// @permissions "+hdr+"\n")
		_, err := Flags(h, cfg)
		assert.ErrorIs(t, err, ErrDeniedEndpoint, hdr)
	}
	h = mustParse(t, script, "// @permissions net=127.0.0.1\n")
	_, err := Flags(h, cfg)
	assert.NoError(t, err, "a portless loopback grant is allowed; the port deny is more specific")

	// Write grants may not reach the runtime's own files.
	h = mustParse(t, script, "// @permissions write="+good.SDKDir+"/mod.ts\n")
	_, err = Flags(h, good)
	assert.ErrorIs(t, err, ErrMachinery)
	h = mustParse(t, script, "// @permissions write="+filepath.Dir(good.SDKDir)+"\n")
	_, err = Flags(h, good)
	assert.ErrorIs(t, err, ErrMachinery)

	// Nor may any grant reach the host's own data.
	data := filepath.Join(filepath.Dir(good.SDKDir), "data")
	cfg = good
	cfg.Protected = []string{data}
	for _, hdr := range []string{"read=" + data + "/consent.json", "write=" + data, "read=" + filepath.Dir(data)} {
		h = mustParse(t, script, "// @permissions "+hdr+"\n")
		_, err = Flags(h, cfg)
		assert.ErrorIs(t, err, ErrMachinery, hdr)
	}
	h = mustParse(t, script, "// @permissions read=a.txt\n")
	_, err = Flags(h, cfg)
	assert.NoError(t, err)
	cfg.Protected = []string{"relative"}
	_, err = Flags(h, cfg)
	assert.ErrorIs(t, err, ErrFlagConfig)
}

func TestCheckFlags(t *testing.T) {
	for _, f := range [][]string{
		{"--allow-all"}, {"-A"}, {"-Ar"}, {"--allow-ffi"}, {"--allow-ffi=/x.so"}, {"--allow-sys"}, {"--allow-sys=hostname"},
		{"--allow-run"}, {"--allow-read"}, {"--allow-net="}, {"-R"}, {"--allow-net=*"}, {"--allow-env=A,*"},
	} {
		assert.Error(t, CheckFlags(f), "%v", f)
	}
	assert.NoError(t, CheckFlags([]string{"--no-prompt", "--allow-run=git", "--deny-net=10.0.0.0/8"}))
}

func TestFlagErrorsAreTyped(t *testing.T) {
	script := scriptDir(t)
	h := mustParse(t, script, "// @permissions none\n")
	_, err := Flags(h, FlagConfig{})
	assert.True(t, errors.Is(err, ErrFlagConfig))
}

// Each script gets an origin of its own, the same on every run and for a
// run-selection of it; deno keys localStorage and the Cache API by it.
func TestFlagsLocationPerScript(t *testing.T) {
	a := scriptDir(t)
	b := filepath.Join(filepath.Dir(a), "other.ts")
	ha := mustParse(t, a, "// @permissions none\n")
	hb := mustParse(t, b, "// @permissions none\n")
	location := func(h *Header, entry string) string {
		c := flagConfig(h.ScriptPath)
		c.Entry = entry
		flags, err := Flags(h, c)
		require.NoError(t, err)
		for _, f := range flags {
			if v, ok := strings.CutPrefix(f, "--location="); ok {
				return v
			}
		}
		t.Fatalf("no --location in %q", flags)
		return ""
	}
	la := location(ha, "")
	assert.Regexp(t, `^http://[0-9a-f]{32}\.invalid/$`, la)
	assert.Equal(t, Location(ha), la)
	assert.NotEqual(t, la, location(hb, ""), "two scripts share no storage")
	assert.Equal(t, la, location(mustParse(t, a, "// @permissions net=api.example.com\n"), ""), "a changed header keeps the store")
	assert.Equal(t, la, location(ha, filepath.Join(filepath.Dir(a), ".runs", "r1.ts")), "a run-selection uses its source's store")
}
