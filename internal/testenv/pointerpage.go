package testenv

import (
	"fmt"
	"strings"
)

// PointerBenchPage is the page of the pointer and bulk-read benchmarks
// (cdp's BenchmarkPointerVerbs, runner's BenchmarkScriptPointerVerbs and
// bench/browser/pointer.mjs for Playwright): two hover targets (#h1,
// #h2), a double-click target (#dbl), an HTML drag and drop list (#drag)
// whose drops the page counts in window.drops, and a table (#grid) of a
// header row and 1,000 rows of 5 cells.
func PointerBenchPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>pointer bench</title>
<div id=h1 style="width:100px;height:30px">one</div><div id=h2 style="width:100px;height:30px">two</div>
<button id=dbl>Twice</button>
<ul id=drag><li draggable=true>A</li><li draggable=true>B</li><li draggable=true>C</li></ul>
<script>
window.drops = 0;
const d = document.getElementById("drag");
d.addEventListener("dragstart", (e) => e.dataTransfer.setData("text/plain", e.target.textContent));
d.addEventListener("dragover", (e) => e.preventDefault());
d.addEventListener("drop", (e) => { e.preventDefault(); drops++; });
</script>
<table id=grid><thead><tr><th>Order</th><th>Customer</th><th>Total</th><th>Status</th><th>Date</th></tr></thead><tbody>`)
	for i := range 1000 {
		fmt.Fprintf(&b, `<tr><td>#%d</td><td>Customer %d</td><td>%d.00</td><td>paid</td><td>2024-03-%02d</td></tr>`, 1000+i, i, i, i%28+1)
	}
	b.WriteString(`</tbody></table>`)
	return b.String()
}
