package eviction

import (
	corev1 "k8s.io/api/core/v1"
)

// pressureTypes are the conditions the manager reports, in the order
// upstream's node status lists them.
var pressureTypes = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// conditionText is upstream's reason and message for each condition when
// True and when False.
var conditionText = map[corev1.NodeConditionType][2][2]string{
	corev1.NodeMemoryPressure: {
		{"KubeletHasInsufficientMemory", "kubelet has insufficient memory available"},
		{"KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	},
	corev1.NodeDiskPressure: {
		{"KubeletHasDiskPressure", "kubelet has disk pressure"},
		{"KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	},
	corev1.NodePIDPressure: {
		{"KubeletHasInsufficientPID", "kubelet has insufficient PID available"},
		{"KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	},
}

// updateConditions records the conditions of the met thresholds as
// observed now, and keeps every condition observed within the pressure
// transition period.
func (m *Manager) updateConditions(met []Threshold) {
	now := m.o.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range met {
		m.lastObservedAt[signalCondition[t.Signal]] = now
	}
	m.conditions = m.conditions[:0]
	for _, ct := range pressureTypes {
		at, ok := m.lastObservedAt[ct]
		// A condition met now is True even with a zero period.
		if ok && (at.Equal(now) || now.Sub(at) < m.o.PressureTransitionPeriod) {
			m.conditions = append(m.conditions, ct)
		}
	}
}

// Conditions are the pressure conditions that are True now.
func (m *Manager) Conditions() []corev1.NodeConditionType {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]corev1.NodeConditionType(nil), m.conditions...)
}

func (m *Manager) has(ct corev1.NodeConditionType) bool {
	for _, c := range m.Conditions() {
		if c == ct {
			return true
		}
	}
	return false
}

// IsUnderMemoryPressure reports the MemoryPressure condition.
func (m *Manager) IsUnderMemoryPressure() bool { return m.has(corev1.NodeMemoryPressure) }

// IsUnderDiskPressure reports the DiskPressure condition.
func (m *Manager) IsUnderDiskPressure() bool { return m.has(corev1.NodeDiskPressure) }

// IsUnderPIDPressure reports the PIDPressure condition.
func (m *Manager) IsUnderPIDPressure() bool { return m.has(corev1.NodePIDPressure) }

// NodeConditions are the MemoryPressure, DiskPressure and PIDPressure
// conditions with upstream's reasons and messages. The times are left for
// the node status code to set (heartbeat now, transition when the status
// changes).
func (m *Manager) NodeConditions() []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, 0, len(pressureTypes))
	for _, ct := range pressureTypes {
		status, text := corev1.ConditionFalse, conditionText[ct][1]
		if m.has(ct) {
			status, text = corev1.ConditionTrue, conditionText[ct][0]
		}
		out = append(out, corev1.NodeCondition{Type: ct, Status: status, Reason: text[0], Message: text[1]})
	}
	return out
}
