package tables

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Placeholders printed for missing values, exactly as upstream spells them.
const (
	none    = "<none>"
	unknown = "<unknown>"
	unset   = "<unset>"
	pending = "<pending>"
)

// objectMetaDoc holds the API documentation of ObjectMeta fields, used as
// column descriptions by every kind.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// nameColumn and ageColumn are the columns nearly every kind starts and ends with.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
}

// since returns the time elapsed since ts, as kubectl shows it ("5m", "3d4h"),
// or "<unknown>" for a zero time.
func (p *printer) since(ts metav1.Time) string {
	if ts.IsZero() {
		return unknown
	}
	return duration.HumanDuration(p.clock.Since(ts.Time))
}

// sinceMicro is since for MicroTime.
func (p *printer) sinceMicro(ts metav1.MicroTime) string {
	if ts.IsZero() {
		return unknown
	}
	return duration.HumanDuration(p.clock.Since(ts.Time))
}

// layoutContainerCells joins container names and images with commas.
func layoutContainerCells(containers []corev1.Container) (names string, images string) {
	n := make([]string, 0, len(containers))
	im := make([]string, 0, len(containers))
	for _, c := range containers {
		n = append(n, c.Name)
		im = append(im, c.Image)
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// listWithMore joins up to max items and appends " + N more..." when there
// were more; an empty list prints "<unset>".
func listWithMore(list []string, more bool, count, max int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		ret = unset
	}
	return ret
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
