package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// Without behavior, a scale-down waits for the highest recommendation of
// the downscale window.
func TestStabilizeRecommendation(t *testing.T) {
	clk := clocktesting.NewFakeClock(start)
	r := newRecommender(clk, 5*time.Minute)
	steps := []struct {
		after     time.Duration
		recommend int32
		want      int32
	}{
		{0, 10, 10},
		{time.Minute, 3, 10},
		{3 * time.Minute, 4, 10},
		{2*time.Minute + time.Second, 3, 4}, // the 10 has left the window
		{5 * time.Minute, 3, 3},
	}
	for i, s := range steps {
		clk.Step(s.after)
		if got := r.stabilizeRecommendation("ns/web", s.recommend); got != s.want {
			t.Errorf("step %d: %d, want %d", i, got, s.want)
		}
	}
}

// With behavior, a recommendation is held between the lowest of the
// scale-up window and the highest of the scale-down window.
func TestStabilizeRecommendationWithBehaviors(t *testing.T) {
	clk := clocktesting.NewFakeClock(start)
	r := newRecommender(clk, 5*time.Minute)
	r.recordInitialRecommendation("ns/web", 5)
	up := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}
	down := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](120)}
	steps := []struct {
		after            time.Duration
		current, desired int32
		want             int32
		wantReason       string
	}{
		{0, 5, 8, 5, "ScaleUpStabilized"},
		{61 * time.Second, 5, 8, 8, "ScaleUpStabilized"},
		{9 * time.Second, 8, 2, 8, "ScaleDownStabilized"},
		{130 * time.Second, 8, 2, 2, "ScaleDownStabilized"},
	}
	for i, s := range steps {
		clk.Step(s.after)
		got, reason, _ := r.stabilizeRecommendationWithBehaviors(normalizationArg{Key: "ns/web", ScaleUpBehavior: up, ScaleDownBehavior: down,
			MinReplicas: 1, MaxReplicas: 100, CurrentReplicas: s.current, DesiredReplicas: s.desired})
		if got != s.want || reason != s.wantReason {
			t.Errorf("step %d: %d %s, want %d %s", i, got, reason, s.want, s.wantReason)
		}
	}
}

func TestConvertDesiredReplicasWithBehaviorRate(t *testing.T) {
	rules := func(sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
		return &autoscalingv2.HPAScalingRules{SelectPolicy: &sel, Policies: policies}
	}
	pods := func(v int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: 60}
	}
	percent := func(v int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: v, PeriodSeconds: 60}
	}
	upDefault := rules(autoscalingv2.MaxChangePolicySelect, pods(4), percent(100))
	downDefault := rules(autoscalingv2.MaxChangePolicySelect, percent(100))
	tests := []struct {
		name                       string
		up, down                   *autoscalingv2.HPAScalingRules
		upEvent, downEvent         int32 // replicas changed 30 s ago
		min, max, current, desired int32
		want                       int32
		wantReason                 string
	}{
		{name: "Max takes the larger policy", up: upDefault, down: downDefault, min: 1, max: 50, current: 3, desired: 20, want: 7, wantReason: "ScaleUpLimit"},
		{name: "Min takes the smaller policy", up: rules(autoscalingv2.MinChangePolicySelect, pods(4), percent(100)), down: downDefault,
			min: 1, max: 50, current: 3, desired: 20, want: 6, wantReason: "ScaleUpLimit"},
		{name: "Disabled does not scale up", up: rules(autoscalingv2.DisabledPolicySelect, pods(4)), down: downDefault,
			min: 1, max: 50, current: 3, desired: 20, want: 3, wantReason: "ScaleUpLimit"},
		{name: "changes within the period count", up: upDefault, down: downDefault, upEvent: 4,
			min: 1, max: 50, current: 7, desired: 20, want: 7, wantReason: "ScaleUpLimit"},
		{name: "maxReplicas below the rate", up: rules(autoscalingv2.MaxChangePolicySelect, percent(1000)), down: downDefault,
			min: 1, max: 5, current: 3, desired: 10, want: 5, wantReason: "TooManyReplicas"},
		{name: "scale-down percent", up: upDefault, down: rules(autoscalingv2.MaxChangePolicySelect, percent(50)),
			min: 1, max: 50, current: 10, desired: 1, want: 5, wantReason: "ScaleDownLimit"},
		{name: "scale-down pods already used in the period", up: upDefault, down: rules(autoscalingv2.MaxChangePolicySelect, pods(2)), downEvent: 2,
			min: 1, max: 50, current: 8, desired: 1, want: 8, wantReason: "ScaleDownLimit"},
		{name: "scale-down Min policy", up: upDefault, down: rules(autoscalingv2.MinChangePolicySelect, pods(1), percent(50)),
			min: 1, max: 50, current: 10, desired: 1, want: 9, wantReason: "ScaleDownLimit"},
		{name: "scale-down Disabled", up: upDefault, down: rules(autoscalingv2.DisabledPolicySelect, pods(1)),
			min: 1, max: 50, current: 10, desired: 1, want: 10, wantReason: "ScaleDownLimit"},
		{name: "minReplicas above the rate", up: upDefault, down: rules(autoscalingv2.MaxChangePolicySelect, pods(10)),
			min: 2, max: 50, current: 3, desired: 1, want: 2, wantReason: "TooFewReplicas"},
		{name: "within range", up: upDefault, down: downDefault, min: 1, max: 50, current: 3, desired: 5, want: 5, wantReason: "DesiredWithinRange"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(start)
			r := newRecommender(clk, 5*time.Minute)
			behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: tt.up, ScaleDown: tt.down}
			if tt.upEvent > 0 {
				r.storeScaleEvent(behavior, "ns/web", tt.current-tt.upEvent, tt.current)
			}
			if tt.downEvent > 0 {
				r.storeScaleEvent(behavior, "ns/web", tt.current+tt.downEvent, tt.current)
			}
			clk.Step(30 * time.Second)
			got, reason, _ := r.convertDesiredReplicasWithBehaviorRate(normalizationArg{Key: "ns/web", ScaleUpBehavior: tt.up, ScaleDownBehavior: tt.down,
				MinReplicas: tt.min, MaxReplicas: tt.max, CurrentReplicas: tt.current, DesiredReplicas: tt.desired})
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("%d %s, want %d %s", got, reason, tt.want, tt.wantReason)
			}
			// Once the period is over, the earlier change no longer counts.
			if tt.upEvent > 0 {
				clk.Step(31 * time.Second)
				got, _, _ := r.convertDesiredReplicasWithBehaviorRate(normalizationArg{Key: "ns/web", ScaleUpBehavior: tt.up, ScaleDownBehavior: tt.down,
					MinReplicas: tt.min, MaxReplicas: tt.max, CurrentReplicas: tt.current, DesiredReplicas: tt.desired})
				if got != 14 {
					t.Errorf("after the period: %d, want 14 (doubled)", got)
				}
			}
		})
	}
}

// A new event reuses the slot of one older than the longest period.
func TestStoreScaleEventReusesOutdated(t *testing.T) {
	clk := clocktesting.NewFakeClock(start)
	r := newRecommender(clk, 5*time.Minute)
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 60}}}}
	r.storeScaleEvent(b, "k", 1, 3)
	clk.Step(10 * time.Second)
	r.storeScaleEvent(b, "k", 3, 5)
	clk.Step(61 * time.Second)
	r.storeScaleEvent(b, "k", 5, 6)
	if n := len(r.scaleUpEvents["k"]); n != 2 {
		t.Errorf("%d events kept, want 2", n)
	}
	if got := replicasChangePerPeriod(clk.Now(), 60, r.scaleUpEvents["k"]); got != 1 {
		t.Errorf("change in the last minute %d, want 1", got)
	}
}

func TestConvertDesiredReplicasWithRules(t *testing.T) {
	tests := []struct {
		current, desired, min, max int32
		want                       int32
		wantReason                 string
	}{
		{2, 10, 1, 20, 4, "ScaleUpLimit"},
		{5, 30, 1, 20, 10, "ScaleUpLimit"},
		{1, 10, 1, 3, 3, "TooManyReplicas"},
		{5, 0, 2, 10, 2, "TooFewReplicas"},
		{5, 6, 1, 10, 6, "DesiredWithinRange"},
	}
	for _, tt := range tests {
		got, reason, _ := convertDesiredReplicasWithRules(tt.current, tt.desired, tt.min, tt.max)
		if got != tt.want || reason != tt.wantReason {
			t.Errorf("%+v: %d %s", tt, got, reason)
		}
	}
}
