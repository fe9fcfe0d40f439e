package natsio

/*
#include "natsio.h"
*/
import "C"

import (
	"context"
)

// waitToken waits until tok completes or ctx ends. On ctx's end it cancels
// the operation and returns the context's error. The completion callback
// only closes a channel, so a goroutine never blocks a library thread.
func waitToken(ctx context.Context, tok *C.natsio_token) error {
	done := make(tokenDone)
	h, box := newHandle(done)
	lockThread()
	err := statusError(cTokenOnComplete(tok, h))
	unlockThread()
	if err != nil {
		// Registration failed; the library may or may not have released it.
		discardHandle(h, box)
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// If the operation completed meanwhile this fails harmlessly with
		// NATSIO_ERR_ILLEGAL_STATE; the context's end wins either way.
		C.natsio_token_cancel(tok)
		return contextError(ctx)
	}
}
