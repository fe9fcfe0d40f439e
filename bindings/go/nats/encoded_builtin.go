package nats

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// jsonEncoder is JSON_ENCODER: encoding/json, except that a *string or
// *[]byte target takes the data as it is (a quoted string unquoted).
type jsonEncoder struct{}

func (jsonEncoder) Encode(_ string, v any) ([]byte, error) { return json.Marshal(v) }

func (jsonEncoder) Decode(_ string, data []byte, vPtr any) error {
	switch target := vPtr.(type) {
	case *string:
		s := string(data)
		if len(s) >= 2 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) {
			s = s[1 : len(s)-1]
		}
		*target = s
		return nil
	case *[]byte:
		*target = data
		return nil
	}
	return json.Unmarshal(data, vPtr)
}

// gobEncoder is GOB_ENCODER: each value a gob stream of its own.
type gobEncoder struct{}

func (gobEncoder) Encode(_ string, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (gobEncoder) Decode(_ string, data []byte, vPtr any) error {
	return gob.NewDecoder(bytes.NewReader(data)).Decode(vPtr)
}

// defaultEncoder is DEFAULT_ENCODER: strings and bytes as they are, bools
// as true/false, nil as nothing, anything else as fmt's %+v; it decodes
// into strings, bytes, ints, floats and bools.
type defaultEncoder struct{}

func (defaultEncoder) Encode(_ string, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case bool:
		return strconv.AppendBool(nil, v), nil
	case nil:
		return []byte{}, nil
	}
	return fmt.Appendf(nil, "%+v", v), nil
}

func (defaultEncoder) Decode(_ string, data []byte, vPtr any) error {
	s := string(data)
	switch target := vPtr.(type) {
	case *string:
		*target = s
	case *[]byte:
		*target = data
	case *int:
		return parseInto(target, s, func(s string) (int, error) {
			n, err := strconv.ParseInt(s, 10, 64)
			return int(n), err
		})
	case *int32:
		return parseInto(target, s, func(s string) (int32, error) {
			n, err := strconv.ParseInt(s, 10, 64)
			return int32(n), err
		})
	case *int64:
		return parseInto(target, s, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	case *float32:
		return parseInto(target, s, func(s string) (float32, error) {
			f, err := strconv.ParseFloat(s, 32)
			return float32(f), err
		})
	case *float64:
		return parseInto(target, s, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	case *bool:
		return parseInto(target, s, strconv.ParseBool)
	default:
		return fmt.Errorf("nats: Default Encoder can't decode to type %s", reflect.TypeOf(vPtr).Elem())
	}
	return nil
}

// parseInto stores parse(s) in target, leaving it as it was on an error.
func parseInto[T any](target *T, s string, parse func(string) (T, error)) error {
	v, err := parse(s)
	if err != nil {
		return err
	}
	*target = v
	return nil
}
