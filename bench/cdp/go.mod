module github.com/tranquil/automation/bench/cdp

go 1.26.0

replace github.com/tranquil/automation => ../..

require (
	github.com/chromedp/cdproto v0.160.1
	github.com/chromedp/chromedp v0.23.1
	github.com/coder/websocket v1.8.15
	github.com/tranquil/automation v0.0.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/mafredri/cdp v0.35.0 // indirect
)
