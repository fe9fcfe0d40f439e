// The Go services tour (bindings/go/README.md): a fragment that connects
// itself and uses package micro. ctx bounds the whole program.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/micro"
)

// Every import is used even when a fragment does not need it.
var _, _, _, _, _ = errors.New, fmt.Sprint, log.Print, time.Now, micro.AddService

var _ natsio.Header

//@TOP@

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = ctx
	//@BODY@
}
