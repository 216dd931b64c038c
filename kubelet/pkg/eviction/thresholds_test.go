package eviction

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseThresholds(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // thresholds joined by ","
		wantErr string
	}{
		{name: "upstream defaults", in: DefaultHard,
			want: "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%"},
		{name: "quantities and spaces", in: " memory.available<1Gi , pid.available<1000 ,", want: "memory.available<1Gi,pid.available<1k"},
		{name: "fractional percentage", in: "nodefs.available<7.5%", want: "nodefs.available<7.5%"},
		{name: "0% and 100% are ignored as upstream", in: "nodefs.available<0%,imagefs.available<100%", want: ""},
		{name: "empty disables", in: "", want: ""},
		{name: "unknown signal", in: "memory.free<1Gi", wantErr: `unsupported eviction signal "memory.free"`},
		{name: "allocatable signal not supported", in: "allocatableMemory.available<1Gi", wantErr: "unsupported eviction signal"},
		{name: "no operator", in: "memory.available=1Gi", wantErr: "expected signal<quantity"},
		{name: "greater-than operator", in: "memory.available>1Gi", wantErr: "expected signal<quantity"},
		{name: "bad quantity", in: "memory.available<lots", wantErr: `invalid quantity "lots"`},
		{name: "no value", in: "memory.available<", wantErr: "has no value"},
		{name: "zero quantity", in: "memory.available<0", wantErr: "must be positive"},
		{name: "negative quantity", in: "memory.available<-1Mi", wantErr: "must be positive"},
		{name: "percentage above 100", in: "nodefs.available<101%", wantErr: "must be <= 100%"},
		{name: "negative percentage", in: "nodefs.available<-5%", wantErr: "must be >= 0%"},
		{name: "bad percentage", in: "nodefs.available<x%", wantErr: "invalid percentage"},
		{name: "duplicate", in: "memory.available<1Gi,memory.available<2Gi", wantErr: "duplicate eviction threshold for signal memory.available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseThresholds(tt.in)
			if done := checkErr(t, err, tt.wantErr); done {
				return
			}
			var s []string
			for _, th := range got {
				s = append(s, th.String())
			}
			if strings.Join(s, ",") != tt.want {
				t.Errorf("got %q, want %q", strings.Join(s, ","), tt.want)
			}
		})
	}
}

func TestThresholdValue(t *testing.T) {
	capacity := resource.MustParse("1000Mi")
	q := resource.MustParse("100Mi")
	tests := []struct {
		name string
		th   Threshold
		want string
	}{
		{name: "quantity", th: Threshold{Quantity: &q}, want: "100Mi"},
		{name: "percentage of capacity", th: Threshold{Percentage: 0.1}, want: "100Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.th.Value(&capacity).String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		flags   Flags
		want    int
		wantErr string
	}{
		{name: "defaults", flags: *NewFlags(), want: 5},
		{name: "negative period", flags: Flags{Hard: DefaultHard, PressureTransitionPeriod: -time.Second}, wantErr: "must not be negative"},
		{name: "bad threshold names the flag", flags: Flags{Hard: "x<1"}, wantErr: "--eviction-hard: unsupported eviction signal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.flags.Thresholds()
			if done := checkErr(t, err, tt.wantErr); done {
				return
			}
			if len(got) != tt.want {
				t.Fatalf("got %v, want %d thresholds", got, tt.want)
			}
		})
	}
	if NewFlags().PressureTransitionPeriod != 5*time.Minute {
		t.Errorf("default transition period = %v, want 5m", NewFlags().PressureTransitionPeriod)
	}
}
