package testenv

import (
	"fmt"
	"regexp"
	"strings"
)

// GuideBlock is one ```ts block of the SDK's guide
// (runner/sdk/writing-automations.md), as the tests that run the guide's
// code take it: runner's against the testing kit's fake host, hosttest's
// against the real host.
type GuideBlock struct {
	Line int    // the guide's line of its opening fence
	Src  string // the block as printed
	// File is the name it is written as: the block's first line when that
	// is "// <name>.ts" (the guide's script and its _test.ts), else
	// guide_L<line>.ts.
	File string
	// Script is set for a whole script: its header has an @permissions line.
	Script bool
}

var (
	blockName   = regexp.MustCompile(`^// ([\w.]+\.ts)\n`)
	blockScript = regexp.MustCompile(`(?m)\A(?://.*\n|\s*\n)*// @permissions `)
)

// GuideBlocks extracts every ```ts block of guide, the guide's text.
func GuideBlocks(guide string) ([]GuideBlock, error) {
	var blocks []GuideBlock
	lines := strings.Split(guide, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```ts" {
			continue
		}
		start := i
		for i++; i < len(lines) && lines[i] != "```"; i++ {
		}
		if i == len(lines) {
			return nil, fmt.Errorf("the ```ts block at line %d of the guide never ends", start+1)
		}
		b := GuideBlock{Line: start + 1, Src: strings.Join(lines[start+1:i], "\n") + "\n"}
		b.File = fmt.Sprintf("guide_L%d.ts", b.Line)
		if m := blockName.FindStringSubmatch(b.Src); m != nil {
			b.File = m[1]
		}
		b.Script = blockScript.MatchString(b.Src)
		blocks = append(blocks, b)
	}
	return blocks, nil
}
