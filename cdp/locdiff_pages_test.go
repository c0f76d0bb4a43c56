package cdp

import (
	"fmt"
	"regexp"
	"strings"
)

// The differential suite's pages: real pages repeat themselves, so each
// of these repeats one structure (rows, cards, fields, items, dialogs)
// with names that recur, overlap and differ only in case. Every element
// gets a data-id of its own (idTags), the identity both sides report.

// diffPage is one page of the suite.
type diffPage struct {
	path string
	html string
}

// openTag finds the start of each opening tag.
var openTag = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)`)

// idTags gives every element of html a data-id, numbered in source order
// with the page's prefix. The pages hold no "<" inside attribute values
// or text, so each match is a tag.
func idTags(prefix, html string) string {
	n := 0
	return openTag.ReplaceAllStringFunc(html, func(m string) string {
		n++
		return fmt.Sprintf(`%s data-id="%s%d"`, m, prefix, n)
	})
}

func diffPages() []diffPage {
	people := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Ada Yonath", "Barbara Liskov", "Edsger Dijkstra"}
	var pages []diffPage
	add := func(name string, body func(b *strings.Builder)) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><title>` + name + `</title></head><body>`)
		body(&b)
		b.WriteString(`</body></html>`)
		pages = append(pages, diffPage{"/locdiff/" + name, idTags(name[:2]+"-", b.String())})
	}
	add("orders", func(b *strings.Builder) {
		b.WriteString(`<table id=orders><tr><th>Customer</th><th>Total</th><th>Status</th><th>Actions</th></tr>`)
		for i, p := range people {
			status := []string{"Paid", "Due", "Overdue"}[i%3]
			fmt.Fprintf(b, `<tr class=order><td>%s</td><td>%d.00</td><td class=status>%s</td><td><button class=edit>Edit</button> <a href="#rm%d">Remove</a> <button>Edit note</button></td></tr>`, p, 10*(i+1), status, i)
		}
		b.WriteString(`</table>`)
	})
	add("cards", func(b *strings.Builder) {
		b.WriteString(`<main><h1>Shop</h1>`)
		for i, item := range []string{"Blue mug", "Red mug", "Blue plate", "Green cup", "Mug rack"} {
			fmt.Fprintf(b, `<article class=card data-testid=card-%d><h3>%s</h3><p class=price>%d.99</p><button class=buy>Add to cart</button><a href="#d%d">Details</a></article>`, i, item, i+3, i)
		}
		b.WriteString(`</main>`)
	})
	add("forms", func(b *strings.Builder) {
		for _, part := range []string{"Shipping", "Billing"} {
			fmt.Fprintf(b, `<fieldset class=address><legend>%s address</legend>`, part)
			for _, f := range []string{"Name", "Street", "City", "Postal code"} {
				id := strings.ToLower(part[:1] + strings.ReplaceAll(f, " ", ""))
				fmt.Fprintf(b, `<label for=%s>%s</label><input id=%s name=%s>`, id, f, id, id)
			}
			fmt.Fprintf(b, `<label><input type=checkbox name=%s-save> Save this address</label></fieldset>`, strings.ToLower(part))
		}
		b.WriteString(`<p><span id=emhint>Email</span><input aria-labelledby=emhint type=email><input aria-label="Phone number" type=tel></p>`)
		b.WriteString(`<button type=submit>Place order</button>`)
	})
	add("nested-lists", func(b *strings.Builder) {
		b.WriteString(`<ul class=tree>`)
		for i := 0; i < 3; i++ {
			fmt.Fprintf(b, `<li>Section %d<ul>`, i+1)
			for j := 0; j < 3; j++ {
				fmt.Fprintf(b, `<li><a href="#s%d-%d">Item %d.%d</a><ul><li>Leaf</li><li>Leaf note</li></ul></li>`, i, j, i+1, j+1)
			}
			b.WriteString(`</ul></li>`)
		}
		b.WriteString(`</ul>`)
	})
	add("menus", func(b *strings.Builder) {
		b.WriteString(`<div role=menubar aria-label=Main>`)
		for _, m := range []string{"File", "Edit", "View"} {
			fmt.Fprintf(b, `<div class=menu><button aria-haspopup=menu>%s</button><div role=menu aria-label="%s menu">`, m, m)
			for _, it := range []string{"New", "Open", "Open recent", "Close"} {
				fmt.Fprintf(b, `<div role=menuitem>%s</div>`, it)
			}
			b.WriteString(`</div></div>`)
		}
		b.WriteString(`</div>`)
	})
	add("dialogs", func(b *strings.Builder) {
		for i, d := range []string{"Delete file", "Rename file", "Share"} {
			fmt.Fprintf(b, `<div role=dialog aria-label="%s" class=dlg><h2>%s</h2><p>Are you sure? Item %d</p><button>OK</button><button>Cancel</button></div>`, d, d, i)
		}
		b.WriteString(`<dialog open><p>Native dialog</p><button>OK</button><button>Close</button></dialog>`)
	})
	add("grid", func(b *strings.Builder) {
		b.WriteString(`<div role=grid aria-label=Sheet>`)
		for r := 0; r < 5; r++ {
			b.WriteString(`<div role=row>`)
			for c := 0; c < 4; c++ {
				fmt.Fprintf(b, `<div role=gridcell>R%dC%d</div>`, r, c)
			}
			b.WriteString(`</div>`)
		}
		b.WriteString(`</div>`)
	})
	add("shadow", func(b *strings.Builder) {
		for i, n := range []string{"Search", "Filter", "Search again"} {
			fmt.Fprintf(b, `<x-field class=xf><template shadowrootmode=open><div class=inner><label for=q>%s</label><input id=q class=q><button>Go</button></div></template></x-field><p>After %d</p>`, n, i)
		}
	})
	add("tabs", func(b *strings.Builder) {
		b.WriteString(`<div role=tablist aria-label=Settings>`)
		for i, t := range []string{"General", "Privacy", "General advanced"} {
			fmt.Fprintf(b, `<button role=tab aria-selected=%v>%s</button>`, i == 0, t)
		}
		b.WriteString(`</div>`)
		for _, t := range []string{"General", "Privacy", "General advanced"} {
			fmt.Fprintf(b, `<div role=tabpanel aria-label="%s"><p>%s options</p><label><input type=checkbox> Enable</label></div>`, t, t)
		}
	})
	add("nav", func(b *strings.Builder) {
		for _, where := range []string{"header", "footer"} {
			fmt.Fprintf(b, `<%s><nav aria-label="%s links"><ul>`, where, where)
			for _, l := range []string{"Home", "About", "About us", "Contact"} {
				fmt.Fprintf(b, `<li><a href="#%s">%s</a></li>`, strings.ToLower(strings.ReplaceAll(l, " ", "")), l)
			}
			fmt.Fprintf(b, `</ul></nav></%s>`, where)
		}
	})
	add("comments", func(b *strings.Builder) {
		var thread func(depth, k int)
		thread = func(depth, k int) {
			fmt.Fprintf(b, `<article class=comment><p class=author>%s</p><p>Reply %d-%d</p><button>Reply</button>`, people[(depth+k)%len(people)], depth, k)
			if depth < 2 {
				for j := 0; j < 2; j++ {
					thread(depth+1, j)
				}
			}
			b.WriteString(`</article>`)
		}
		thread(0, 0)
		thread(0, 1)
	})
	add("sections", func(b *strings.Builder) {
		for i, s := range []string{"Overview", "Details", "Overview notes", "Pricing"} {
			fmt.Fprintf(b, `<section aria-labelledby=h%d><h2 id=h%d>%s</h2><p>Text of %s.</p><button>More</button></section>`, i, i, s, strings.ToLower(s))
		}
	})
	add("choices", func(b *strings.Builder) {
		for _, g := range []string{"Size", "Colour"} {
			fmt.Fprintf(b, `<fieldset><legend>%s</legend>`, g)
			for _, o := range []string{"Small", "Medium", "Large"} {
				fmt.Fprintf(b, `<label><input type=radio name=%s> %s</label>`, strings.ToLower(g), o)
			}
			b.WriteString(`</fieldset>`)
		}
		for _, o := range []string{"Gift wrap", "Gift card", "Newsletter"} {
			fmt.Fprintf(b, `<label class=opt><input type=checkbox> %s</label>`, o)
		}
	})
	add("selects", func(b *strings.Builder) {
		for _, s := range []string{"Country", "Region", "Country of birth"} {
			fmt.Fprintf(b, `<div class=row><label>%s <select><option>France</option><option>Peru</option><option>Chad</option></select></label></div>`, s)
		}
		b.WriteString(`<label>Notes <textarea></textarea></label>`)
	})
	add("hidden", func(b *strings.Builder) {
		for i := 0; i < 4; i++ {
			attr := []string{``, ` hidden`, ` style="display:none"`, ` style="visibility:hidden"`}[i]
			fmt.Fprintf(b, `<div class=panel%s><h3>Panel %d</h3><button>Save</button><a href="#p%d">Link %d</a></div>`, attr, i, i, i)
		}
		b.WriteString(`<div aria-hidden=true><button>Save</button></div>`)
	})
	add("disabled", func(b *strings.Builder) {
		for i, on := range []bool{true, false, true, false} {
			dis := ""
			if !on {
				dis = " disabled"
			}
			fmt.Fprintf(b, `<div class=step><span>Step %d</span><button%s>Next</button><input aria-label="Answer %d"%s></div>`, i, dis, i, dis)
		}
	})
	add("tree", func(b *strings.Builder) {
		b.WriteString(`<ul role=tree aria-label=Files>`)
		for i, d := range []string{"src", "docs", "src test"} {
			fmt.Fprintf(b, `<li role=treeitem aria-expanded=true>%s<ul role=group>`, d)
			for j := 0; j < 3; j++ {
				fmt.Fprintf(b, `<li role=treeitem>file%d.go</li>`, i*3+j)
			}
			b.WriteString(`</ul></li>`)
		}
		b.WriteString(`</ul>`)
	})
	add("accordion", func(b *strings.Builder) {
		for i, q := range []string{"Shipping", "Returns", "Shipping costs"} {
			fmt.Fprintf(b, `<h3><button aria-expanded=true aria-controls=a%d>%s</button></h3><div id=a%d role=region aria-label="%s answer"><p>Answer %d</p><a href="#more%d">Read more</a></div>`, i, q, i, q, i, i)
		}
	})
	add("pagination", func(b *strings.Builder) {
		for _, where := range []string{"top", "bottom"} {
			fmt.Fprintf(b, `<nav class=pager-%s aria-label="Pages %s"><a href="#prev">Previous</a>`, where, where)
			for i := 1; i <= 5; i++ {
				fmt.Fprintf(b, ` <a href="#%d">%d</a>`, i, i)
			}
			b.WriteString(` <a href="#next">Next</a></nav>`)
		}
	})
	add("toolbar", func(b *strings.Builder) {
		for _, tb := range []string{"Format", "Insert"} {
			fmt.Fprintf(b, `<div role=toolbar aria-label=%s>`, tb)
			for _, bt := range []string{"Bold", "Italic", "Bold italic"} {
				fmt.Fprintf(b, `<button aria-label="%s"><span class=icon>*</span></button><button title="%s %s">T</button>`, bt, bt, tb)
			}
			b.WriteString(`</div>`)
		}
	})
	add("datatable", func(b *strings.Builder) {
		b.WriteString(`<table class=data><caption>Scores</caption><thead><tr><th scope=col>Player</th><th scope=col>Score</th></tr></thead><tbody>`)
		for i, p := range people {
			fmt.Fprintf(b, `<tr><th scope=row>%s</th><td>%d</td></tr>`, p, 100-i*7)
		}
		b.WriteString(`</tbody><tfoot><tr><th scope=row>Total</th><td>495</td></tr></tfoot></table>`)
	})
	add("deep-shadow", func(b *strings.Builder) {
		for i := 0; i < 2; i++ {
			fmt.Fprintf(b, `<x-outer class=outer><template shadowrootmode=open><section class=card><h4>Outer %d</h4><x-inner><template shadowrootmode=open><button class=act>Act</button><span data-testid=badge>Badge %d</span></template></x-inner><button class=act>Act outer</button></section></template></x-outer>`, i, i)
		}
	})
	add("cases", func(b *strings.Builder) {
		for _, s := range []string{"Edit", "edit item", "EDIT", "Edit  item", "Editor"} {
			fmt.Fprintf(b, `<div class=box><button>%s</button><span>%s</span></div>`, s, s)
		}
	})
	add("listbox", func(b *strings.Builder) {
		for _, l := range []string{"Fruit", "Vegetables"} {
			fmt.Fprintf(b, `<div role=listbox aria-label=%s>`, l)
			for i, o := range []string{"Apple", "Pear", "Apple pie"} {
				fmt.Fprintf(b, `<div role=option aria-selected=%v>%s</div>`, i == 0, o)
			}
			b.WriteString(`</div>`)
		}
	})
	add("testids", func(b *strings.Builder) {
		for i := 0; i < 3; i++ {
			fmt.Fprintf(b, `<div data-testid=row class=r><span data-testid=name>Name %d</span><span data-testid=value>%d</span><button data-testid=go>Go %d</button></div>`, i, i*11, i)
		}
	})
	return pages
}
