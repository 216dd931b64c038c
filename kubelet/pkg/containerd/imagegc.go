package containerd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/errdefs"
	ctrdimages "github.com/containerd/containerd/images"

	"skiff.dev/kubelet/pkg/imagegc"
)

// ImageGC is the image garbage collector's view of the runtime: images
// are identified by their manifest digest, as containers' image IDs
// (repo@digest) end.
type ImageGC struct{ R *Runtime }

var _ imagegc.Runtime = ImageGC{}

// ListImages groups the names of this namespace's images by digest.
func (g ImageGC) ListImages(ctx context.Context) ([]imagegc.Image, error) {
	ctx = g.R.ns(ctx)
	list, err := g.R.client.ListImages(ctx)
	if err != nil {
		return nil, err
	}
	byDigest := map[string]*imagegc.Image{}
	for _, img := range list {
		id := img.Target().Digest.String()
		gi := byDigest[id]
		if gi == nil {
			size, err := img.Usage(ctx, containerd.WithSnapshotUsage())
			if err != nil {
				size, _ = img.Size(ctx)
			}
			gi = &imagegc.Image{ID: id, Size: size}
			byDigest[id] = gi
		}
		gi.Refs = append(gi.Refs, img.Name())
	}
	out := make([]imagegc.Image, 0, len(byDigest))
	for _, gi := range byDigest {
		sort.Strings(gi.Refs)
		out = append(out, *gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ImagesInUse are the digests of every container's image, running or not.
func (g ImageGC) ImagesInUse(ctx context.Context) ([]string, error) {
	ctx = g.R.ns(ctx)
	list, err := g.R.client.Containers(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range list {
		labels, err := c.Labels(ctx)
		if err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if id := labels[labelImageID]; id != "" {
			if _, digest, ok := strings.Cut(id, "@"); ok {
				ids = append(ids, digest)
			}
		}
	}
	return ids, nil
}

// RemoveImage deletes every name of the image (the last one
// synchronously, so its content and snapshots go) and forgets them.
func (g ImageGC) RemoveImage(ctx context.Context, img imagegc.Image) error {
	ctx = g.R.ns(ctx)
	var errs []error
	for i, ref := range img.Refs {
		var opts []ctrdimages.DeleteOpt
		if i == len(img.Refs)-1 {
			opts = append(opts, ctrdimages.SynchronousDelete())
		}
		if err := g.R.client.ImageService().Delete(ctx, ref, opts...); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("removing image %s: %w", ref, err))
		}
		g.R.forgetImage(ref)
	}
	return errors.Join(errs...)
}
