package server

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"
)

// compactRevKey coordinates compaction between API servers, as upstream's.
const compactRevKey = "compact_rev_key"

// runCompactor compacts etcd every interval to the revision seen one
// interval earlier, so watchers always have at least one interval of
// history. Several API servers agree through compactRevKey: only the one
// whose compare-and-swap wins compacts.
func runCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration) error {
	logger := klog.FromContext(ctx).WithName("compactor")
	var version, rev int64
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		v, r, err := compact(ctx, client, version, rev)
		if err != nil {
			logger.Error(err, "compaction failed")
			continue
		}
		version, rev = v, r
	}
}

// compact records the current revision and compacts to prevRev if this
// server won the round (the key's version still equals t).
func compact(ctx context.Context, client *clientv3.Client, t, prevRev int64) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := client.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(compactRevKey), "=", t),
	).Then(
		clientv3.OpPut(compactRevKey, strconv.FormatInt(prevRev, 10)),
	).Else(
		clientv3.OpGet(compactRevKey),
	).Commit()
	if err != nil {
		return t, prevRev, err
	}
	curRev := resp.Header.Revision
	if !resp.Succeeded {
		curTime := resp.Responses[0].GetResponseRange().Kvs[0].Version
		return curTime, curRev, nil
	}
	curTime := t + 1
	if prevRev == 0 {
		return curTime, curRev, nil
	}
	if _, err := client.Compact(ctx, prevRev); err != nil {
		return curTime, curRev, err
	}
	klog.FromContext(ctx).V(2).Info("compacted etcd", "revision", prevRev)
	return curTime, curRev, nil
}
