package endpoints

import "testing"

func TestHugeExponent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{name: "json string", in: `{"memory":"1e-2147483648"}`, want: true},
		{name: "json number", in: `{"cpu":1e-999999999}`, want: true},
		{name: "with suffix", in: `{"cpu":"1e1000Mi"}`, want: true},
		{name: "yaml", in: "memory: 1e-99999\n", want: true},
		{name: "protobuf length byte", in: "\x0a\x0e1e-2147483648\x12", want: true},
		{name: "small exponent", in: `{"cpu":"1e3","memory":"2.5e-2"}`, want: false},
		{name: "image digest", in: `{"image":"nginx@sha256:4a1e123456789abcdef0"}`, want: false},
		{name: "digest digits after colon", in: `{"image":"x@sha256:1e12345f"}`, want: false},
		{name: "free text", in: `{"message":"node-1e12345 is busy"}`, want: false},
		{name: "word", in: `{"name":"release12345"}`, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hugeExponent([]byte(tc.in)); got != tc.want {
				t.Errorf("hugeExponent(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
