package podautoscaler

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/clock"
)

// Upstream's fixed scale-up rate for an HPA without behavior: at most
// double, or to 4, per sync.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

type timestampedRecommendation struct {
	recommendation int32
	timestamp      time.Time
}

type timestampedScaleEvent struct {
	replicaChange int32
	timestamp     time.Time
	// outdated events are reused for new ones.
	outdated bool
}

// recommender remembers each HPA's recent recommendations and scale
// events, by HPA key, for the stabilization windows and the rate policies.
type recommender struct {
	clock clock.PassiveClock
	// downscaleStabilisationWindow is upstream's
	// --horizontal-pod-autoscaler-downscale-stabilization.
	downscaleStabilisationWindow time.Duration

	mu              sync.Mutex
	recommendations map[string][]timestampedRecommendation
	scaleUpEvents   map[string][]timestampedScaleEvent
	scaleDownEvents map[string][]timestampedScaleEvent
}

func newRecommender(clk clock.PassiveClock, window time.Duration) *recommender {
	return &recommender{
		clock: clk, downscaleStabilisationWindow: window,
		recommendations: map[string][]timestampedRecommendation{},
		scaleUpEvents:   map[string][]timestampedScaleEvent{},
		scaleDownEvents: map[string][]timestampedScaleEvent{},
	}
}

// forget drops what is known of a deleted HPA.
func (r *recommender) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recommendations, key)
	delete(r.scaleUpEvents, key)
	delete(r.scaleDownEvents, key)
}

// recordInitialRecommendation seeds a new HPA's history with the current
// size, so that its first recommendation cannot scale down at once.
func (r *recommender) recordInitialRecommendation(key string, currentReplicas int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recommendations[key] == nil {
		r.recommendations[key] = []timestampedRecommendation{{currentReplicas, r.clock.Now()}}
	}
}

// stabilizeRecommendation (no behavior): the highest recommendation within
// the downscale window; the new one is recorded, reusing an expired slot.
func (r *recommender) stabilizeRecommendation(key string, prenormalized int32) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	maxRecommendation := prenormalized
	foundOld, oldIndex := false, 0
	cutoff := now.Add(-r.downscaleStabilisationWindow)
	for i, rec := range r.recommendations[key] {
		if rec.timestamp.Before(cutoff) {
			foundOld, oldIndex = true, i
		} else if rec.recommendation > maxRecommendation {
			maxRecommendation = rec.recommendation
		}
	}
	if foundOld {
		r.recommendations[key][oldIndex] = timestampedRecommendation{prenormalized, now}
	} else {
		r.recommendations[key] = append(r.recommendations[key], timestampedRecommendation{prenormalized, now})
	}
	return maxRecommendation
}

// normalizationArg is what the behavior normalization works on.
type normalizationArg struct {
	Key               string
	ScaleUpBehavior   *autoscalingv2.HPAScalingRules
	ScaleDownBehavior *autoscalingv2.HPAScalingRules
	MinReplicas       int32
	MaxReplicas       int32
	CurrentReplicas   int32
	DesiredReplicas   int32
}

// stabilizeRecommendationWithBehaviors keeps the recommendation between
// the lowest one of the scale-up window and the highest one of the
// scale-down window, and records the new one; reason and message explain
// a change.
func (r *recommender) stabilizeRecommendationWithBehaviors(args normalizationArg) (int32, string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	foundOld, oldIndex := false, 0

	upRecommendation := args.DesiredReplicas
	upCutoff := now.Add(-time.Second * time.Duration(*args.ScaleUpBehavior.StabilizationWindowSeconds))
	downRecommendation := args.DesiredReplicas
	downCutoff := now.Add(-time.Second * time.Duration(*args.ScaleDownBehavior.StabilizationWindowSeconds))
	for i, rec := range r.recommendations[args.Key] {
		if rec.timestamp.After(upCutoff) {
			upRecommendation = min(rec.recommendation, upRecommendation)
		}
		if rec.timestamp.After(downCutoff) {
			downRecommendation = max(rec.recommendation, downRecommendation)
		}
		if rec.timestamp.Before(upCutoff) && rec.timestamp.Before(downCutoff) {
			foundOld, oldIndex = true, i
		}
	}
	recommendation := args.CurrentReplicas
	if recommendation < upRecommendation {
		recommendation = upRecommendation
	}
	if recommendation > downRecommendation {
		recommendation = downRecommendation
	}
	if foundOld {
		r.recommendations[args.Key][oldIndex] = timestampedRecommendation{args.DesiredReplicas, now}
	} else {
		r.recommendations[args.Key] = append(r.recommendations[args.Key], timestampedRecommendation{args.DesiredReplicas, now})
	}
	if args.DesiredReplicas >= args.CurrentReplicas {
		return recommendation, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return recommendation, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// convertDesiredReplicasWithBehaviorRate limits the change by the policies
// of its direction, counting the changes made within each policy's period.
func (r *recommender) convertDesiredReplicasWithBehaviorRate(args normalizationArg) (int32, string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if args.DesiredReplicas > args.CurrentReplicas {
		scaleUpLimit := calculateScaleUpLimitWithScalingRules(now, args.CurrentReplicas, r.scaleUpEvents[args.Key], r.scaleDownEvents[args.Key], args.ScaleUpBehavior)
		if scaleUpLimit < args.CurrentReplicas {
			// No further scale-up until older events leave the periods.
			scaleUpLimit = args.CurrentReplicas
		}
		maximumAllowed := args.MaxReplicas
		reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maximumAllowed > scaleUpLimit {
			maximumAllowed = scaleUpLimit
			reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if args.DesiredReplicas > maximumAllowed {
			return maximumAllowed, reason, message
		}
	} else if args.DesiredReplicas < args.CurrentReplicas {
		scaleDownLimit := calculateScaleDownLimitWithBehaviors(now, args.CurrentReplicas, r.scaleUpEvents[args.Key], r.scaleDownEvents[args.Key], args.ScaleDownBehavior)
		if scaleDownLimit > args.CurrentReplicas {
			scaleDownLimit = args.CurrentReplicas
		}
		minimumAllowed := args.MinReplicas
		reason, message := "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minimumAllowed < scaleDownLimit {
			minimumAllowed = scaleDownLimit
			reason, message = "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if args.DesiredReplicas < minimumAllowed {
			return minimumAllowed, reason, message
		}
	}
	return args.DesiredReplicas, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// storeScaleEvent records a change for the rate policies of an HPA with
// behavior, reusing a slot that is older than the longest period.
func (r *recommender) storeScaleEvent(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prevReplicas, newReplicas int32) {
	if behavior == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	events, rules, change := r.scaleUpEvents, behavior.ScaleUp, newReplicas-prevReplicas
	if newReplicas < prevReplicas {
		events, rules, change = r.scaleDownEvents, behavior.ScaleDown, prevReplicas-newReplicas
	}
	var longest int32
	if rules != nil {
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	cutoff := now.Add(-time.Second * time.Duration(longest))
	list := events[key]
	oldIndex := -1
	for i := range list {
		if list[i].timestamp.Before(cutoff) {
			list[i].outdated = true
		}
		if list[i].outdated {
			oldIndex = i
		}
	}
	ev := timestampedScaleEvent{replicaChange: change, timestamp: now}
	if oldIndex >= 0 {
		list[oldIndex] = ev
	} else {
		list = append(list, ev)
	}
	events[key] = list
}

// replicasChangePerPeriod sums the changes within the last periodSeconds.
func replicasChangePerPeriod(now time.Time, periodSeconds int32, events []timestampedScaleEvent) int32 {
	cutoff := now.Add(-time.Second * time.Duration(periodSeconds))
	var replicas int32
	for _, e := range events {
		if e.timestamp.After(cutoff) {
			replicas += e.replicaChange
		}
	}
	return replicas
}

// calculateScaleUpLimitWithScalingRules is the most replicas the scale-up
// policies allow now: each policy's limit from the size at the start of
// its period, the largest (Max) or smallest (Min) of them; Disabled keeps
// the current size.
func calculateScaleUpLimitWithScalingRules(now time.Time, currentReplicas int32, upEvents, downEvents []timestampedScaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return currentReplicas
	}
	result, pick := int32(math.MinInt32), func(a, b int32) int32 { return max(a, b) }
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MaxInt32, func(a, b int32) int32 { return min(a, b) }
	}
	for _, p := range rules.Policies {
		periodStart := currentReplicas - replicasChangePerPeriod(now, p.PeriodSeconds, upEvents) + replicasChangePerPeriod(now, p.PeriodSeconds, downEvents)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = periodStart + p.Value
		case autoscalingv2.PercentScalingPolicy:
			// Rounded up, or a small target would never grow.
			proposed = int32(math.Ceil(float64(periodStart) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// calculateScaleDownLimitWithBehaviors is the fewest replicas the
// scale-down policies allow now.
func calculateScaleDownLimitWithBehaviors(now time.Time, currentReplicas int32, upEvents, downEvents []timestampedScaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return currentReplicas
	}
	result, pick := int32(math.MaxInt32), func(a, b int32) int32 { return min(a, b) }
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MinInt32, func(a, b int32) int32 { return max(a, b) }
	}
	for _, p := range rules.Policies {
		periodStart := currentReplicas - replicasChangePerPeriod(now, p.PeriodSeconds, upEvents) + replicasChangePerPeriod(now, p.PeriodSeconds, downEvents)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = periodStart - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(periodStart) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// convertDesiredReplicasWithRules (no behavior): within min and max, and
// at most double (or 4) the current size per sync.
func convertDesiredReplicasWithRules(currentReplicas, desiredReplicas, minReplicas, maxReplicas int32) (int32, string, string) {
	scaleUpLimit := int32(math.Max(scaleUpLimitFactor*float64(currentReplicas), scaleUpLimitMinimum))
	maximumAllowed := maxReplicas
	reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > scaleUpLimit {
		maximumAllowed = scaleUpLimit
		reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	if desiredReplicas < minReplicas {
		return minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	}
	if desiredReplicas > maximumAllowed {
		return maximumAllowed, reason, message
	}
	return desiredReplicas, "DesiredWithinRange", "the desired count is within the acceptable range"
}
