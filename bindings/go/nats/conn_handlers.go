package nats

// The event handlers a program sets or reads after Connect, as nats.go's
// Conn.Set*Handler and getters. The connect-time callbacks the binding
// runs (options.go, bindingOptions) read the handler in nc.Opts when the
// event happens, under handlersMu, so a handler set after Connect is the
// one called for the next event.

// loadHandler reads one handler field of nc.Opts under handlersMu.
func loadHandler[H any](nc *Conn, field *H) H {
	nc.handlersMu.RLock()
	defer nc.handlersMu.RUnlock()
	return *field
}

// storeHandler writes one handler field of nc.Opts under handlersMu.
func storeHandler[H any](nc *Conn, field *H, h H) {
	nc.handlersMu.Lock()
	defer nc.handlersMu.Unlock()
	*field = h
}

// SetDisconnectHandler sets the handler of lost connections that takes no
// error; it is not called while a DisconnectErrHandler is set, as in
// nats.go. Deprecated: use SetDisconnectErrHandler.
func (nc *Conn) SetDisconnectHandler(cb ConnHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.DisconnectedCB, cb)
	}
}

// SetDisconnectErrHandler sets the handler of lost connections.
func (nc *Conn) SetDisconnectErrHandler(cb ConnErrHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.DisconnectedErrCB, cb)
	}
}

// DisconnectErrHandler is the handler of lost connections.
func (nc *Conn) DisconnectErrHandler() ConnErrHandler {
	if nc == nil {
		return nil
	}
	return loadHandler(nc, &nc.Opts.DisconnectedErrCB)
}

// SetReconnectHandler sets the handler of reconnects.
func (nc *Conn) SetReconnectHandler(cb ConnHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.ReconnectedCB, cb)
	}
}

// ReconnectHandler is the handler of reconnects.
func (nc *Conn) ReconnectHandler() ConnHandler {
	if nc == nil {
		return nil
	}
	return loadHandler(nc, &nc.Opts.ReconnectedCB)
}

// SetDiscoveredServersHandler sets the handler of servers joining the
// pool.
func (nc *Conn) SetDiscoveredServersHandler(cb ConnHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.DiscoveredServersCB, cb)
	}
}

// DiscoveredServersHandler is the handler of servers joining the pool.
func (nc *Conn) DiscoveredServersHandler() ConnHandler {
	if nc == nil {
		return nil
	}
	return loadHandler(nc, &nc.Opts.DiscoveredServersCB)
}

// SetClosedHandler sets the handler of the connection's close.
func (nc *Conn) SetClosedHandler(cb ConnHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.ClosedCB, cb)
	}
}

// ClosedHandler is the handler of the connection's close.
func (nc *Conn) ClosedHandler() ConnHandler {
	if nc == nil {
		return nil
	}
	return loadHandler(nc, &nc.Opts.ClosedCB)
}

// SetErrorHandler sets the handler of asynchronous errors.
func (nc *Conn) SetErrorHandler(cb ErrHandler) {
	if nc != nil {
		storeHandler(nc, &nc.Opts.AsyncErrorCB, cb)
	}
}

// ErrorHandler is the handler of asynchronous errors.
func (nc *Conn) ErrorHandler() ErrHandler {
	if nc == nil {
		return nil
	}
	return loadHandler(nc, &nc.Opts.AsyncErrorCB)
}

// DisconnectHandler sets the handler of lost connections that takes no
// error (Options.DisconnectedCB); DisconnectErrHandler's takes its place
// when both are set. Deprecated: use DisconnectErrHandler.
func DisconnectHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.DisconnectedCB = cb; return nil }
}

// NoCallbacksAfterClientClose has Close not call the disconnect and closed
// handlers; a close for any other reason (Drain, a connection that could
// not be restored) still calls them.
func NoCallbacksAfterClientClose() Option {
	return func(o *Options) error { o.NoCallbacksAfterClientClose = true; return nil }
}

// muted reports whether the disconnect and closed handlers are not to be
// called: the program closed nc itself with NoCallbacksAfterClientClose.
func (nc *Conn) muted() bool {
	return nc.Opts.NoCallbacksAfterClientClose && nc.closedByClient.Load()
}

// disconnected calls the handler of a lost connection: the one with the
// error, or else the deprecated one without.
func (nc *Conn) disconnected(err error) {
	if nc.muted() {
		return
	}
	if cb := nc.DisconnectErrHandler(); cb != nil {
		cb(nc, err)
	} else if cb := loadHandler(nc, &nc.Opts.DisconnectedCB); cb != nil {
		cb(nc)
	}
}
