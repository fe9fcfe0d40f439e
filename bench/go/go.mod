module github.com/libnatsio/natsio/bench/go

go 1.24

require github.com/libnatsio/natsio/bindings/go v0.0.0

// The binding is used straight from this repository (it links
// ../../target/release/libnatsio.a through its own cgo directives).
replace github.com/libnatsio/natsio/bindings/go => ../../bindings/go
