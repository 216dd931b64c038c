package containerd

import "context"

// ImageSize is the size of a local image's content (its manifest, config
// and layers as stored), as the CRI's ImageStatus reports it; the kubelet's
// kubelet_image_pull_duration_seconds is labelled by it.
func (r *Runtime) ImageSize(ctx context.Context, ref string) (int64, error) {
	ctx = r.ns(ctx)
	img, err := r.client.GetImage(ctx, ref)
	if err != nil {
		return 0, err
	}
	return img.Size(ctx)
}
