package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Media types of the OCI image spec.
const (
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayerGz  = "application/vnd.oci.image.layer.v1.tar+gzip"
	annotationRefName = "org.opencontainers.image.ref.name"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// runConfig is the part of an image's configuration a container starts
// from.
type runConfig struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
}

type imageConfig struct {
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       runConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// defaultPath is the PATH of every image.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// writeLayout writes an OCI image layout in dir with one image, tagged tag,
// made of layers (lowest first) and run as cfg, and returns the digest of
// its manifest.
func writeLayout(dir, tag string, layers []*layer, cfg runConfig) (string, error) {
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", err
	}
	write := func(mediaType string, data []byte) (descriptor, error) {
		d := sha256Digest(data)
		err := os.WriteFile(filepath.Join(blobs, strings.TrimPrefix(d, "sha256:")), data, 0o644)
		return descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}, err
	}
	ic := imageConfig{Architecture: "amd64", OS: "linux", Config: cfg}
	ic.RootFS.Type = "layers"
	m := manifest{SchemaVersion: 2, MediaType: mediaTypeManifest}
	for _, l := range layers {
		gz, diffID, err := l.blob()
		if err != nil {
			return "", err
		}
		d, err := write(mediaTypeLayerGz, gz)
		if err != nil {
			return "", err
		}
		m.Layers = append(m.Layers, d)
		ic.RootFS.DiffIDs = append(ic.RootFS.DiffIDs, diffID)
	}
	cfgJSON, err := json.Marshal(ic)
	if err != nil {
		return "", err
	}
	if m.Config, err = write(mediaTypeConfig, cfgJSON); err != nil {
		return "", err
	}
	mJSON, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	md, err := write(mediaTypeManifest, mJSON)
	if err != nil {
		return "", err
	}
	md.Annotations = map[string]string{annotationRefName: tag}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{md}})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		return "", fmt.Errorf("writing the layout: %w", err)
	}
	return md.Digest, nil
}
