package images

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Normalize returns the full reference of an image name as docker and
// upstream's kubelet read it: the docker.io registry and the library/
// repository by default, and the tag latest when neither tag nor digest is
// given.
func Normalize(image string) (string, error) {
	if strings.TrimSpace(image) == "" {
		return "", fmt.Errorf("empty image name")
	}
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("invalid image name %q: %w", image, err)
	}
	return named.String(), nil
}

// Host is the registry host of a normalised reference.
func Host(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	return reference.Domain(named)
}
