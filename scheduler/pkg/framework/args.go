package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ArgsAPIVersion is the API version plugin arguments may name.
const ArgsAPIVersion = "kubescheduler.config.k8s.io/v1"

// DecodeArgs decodes a plugin's JSON arguments into out, rejecting unknown
// fields. The arguments may carry apiVersion and kind; when they do, they
// must be ArgsAPIVersion and kind.
func DecodeArgs(args json.RawMessage, kind string, out any) error {
	if len(args) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return fmt.Errorf("decoding %s: %w", kind, err)
	}
	for key, want := range map[string]string{"apiVersion": ArgsAPIVersion, "kind": kind} {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		var got string
		if err := json.Unmarshal(raw, &got); err != nil || got != want {
			return fmt.Errorf("decoding %s: %s is %s, want %q", kind, key, raw, want)
		}
		delete(fields, key)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decoding %s: %w", kind, err)
	}
	return nil
}
