package natsio

// C string arrays for the C calls that take `const char *const *` and a
// count: one C allocation per string and one for the array, freed after
// the call (Go memory holding Go pointers cannot be passed to C).

/*
#include <stdlib.h>
*/
import "C"

import "unsafe"

type cStrings struct {
	arr **C.char
	n   int
}

// newCStrings copies ss into C memory (nil or empty: no array).
// ErrInvalidArgument for a string with a NUL byte.
func newCStrings(ss []string) (cStrings, error) {
	if len(ss) == 0 {
		return cStrings{}, nil
	}
	for _, s := range ss {
		if err := checkNUL(s); err != nil {
			return cStrings{}, err
		}
	}
	arr := (**C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	items := unsafe.Slice(arr, len(ss))
	for i, s := range ss {
		items[i] = C.CString(s)
	}
	return cStrings{arr: arr, n: len(ss)}, nil
}

func (c cStrings) ptr() **C.char   { return c.arr }
func (c cStrings) count() C.size_t { return C.size_t(c.n) }

func (c cStrings) free() {
	if c.arr == nil {
		return
	}
	for _, p := range unsafe.Slice(c.arr, c.n) {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(c.arr))
}
