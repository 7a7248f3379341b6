module portico.dev/node-testimage

go 1.24
