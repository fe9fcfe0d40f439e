// README fragments that connect themselves. ctx bounds the whole program.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Every import is used even when a fragment does not need it.
var _, _, _, _, _, _ = errors.New, fmt.Sprint, io.Copy, log.Print, os.Open, time.Now

//@TOP@

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = ctx
	//@BODY@
}
