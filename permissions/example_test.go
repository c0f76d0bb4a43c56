package permissions_test

import (
	"errors"
	"fmt"

	"github.com/tranquil/automation/permissions"
)

func ExampleParse_error() {
	_, err := permissions.Parse([]byte("// @permissions brwoser\n"), script)
	var pe *permissions.ParseError
	if errors.As(err, &pe) && errors.Is(err, permissions.ErrUnknownKey) {
		fmt.Println(pe.Line, pe.Column, pe.Msg)
	}
	_, err = permissions.Parse([]byte("// @permissions read=.\n"), script)
	fmt.Println(errors.Is(err, permissions.ErrBlanketPath))
	// Output:
	// 1 17 unknown key "brwoser", did you mean "browser"?
	// true
}

func ExampleDiff() {
	old, _ := permissions.Parse([]byte("// @permissions browser net=a.example\n"), script)
	next, _ := permissions.Parse([]byte("// @permissions browser net=a.example,b.example run=git\n"), script)
	d := permissions.Diff(old.Grants(), next.Grants())
	for _, g := range d.Added.Describe() {
		fmt.Println("+", g.Text)
	}
	// Output:
	// + can connect to b.example
	// + can run commands as you, with your full access: git
}
