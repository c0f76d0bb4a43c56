module github.com/tranquil/automation

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/google/uuid v1.6.0
	github.com/mafredri/cdp v0.35.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
)

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
