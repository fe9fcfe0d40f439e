module github.com/libnatsio/natsio/bindings/go

go 1.24
