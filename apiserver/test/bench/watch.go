package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	watchTarget = 20 * time.Millisecond

	annRun  = "bench.skiff.dev/run"
	annSeq  = "bench.skiff.dev/seq"
	annSent = "bench.skiff.dev/sent-unixnano"
)

// received is one event as a watcher saw it.
type received struct {
	run, seq int
	delay    time.Duration
}

// watchPhase opens -watchers watches on a namespace, each on its own
// connection, then for each rate updates a ConfigMap -watch-writes times,
// stamping the send time into an annotation; every watcher records the
// time it received the event minus the send time.
func (b *bench) watchPhase(ctx context.Context) error {
	const ns = "bench-watch"
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return err
	}
	writers, err := b.newClients(ctx, 1, contentProtobuf)
	if err != nil {
		return err
	}
	cms := writers[0].CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "watched", Annotations: map[string]string{}},
		Data:       map[string]string{"key": "value"},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}

	progress("opening %d watches on %s", b.o.watchers, ns)
	clients, err := b.newClients(ctx, b.o.watchers, contentProtobuf)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := len(b.o.watchRates)
	counts := make([]atomic.Int64, runs+1) // index runs counts the sync events
	recs := make([][]received, b.o.watchers)
	errs := make([]error, b.o.watchers)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for wi, c := range clients {
		w, err := c.CoreV1().ConfigMaps(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
		if err != nil {
			return fmt.Errorf("watch %d: %w", wi, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for {
				var ev watch.Event
				var ok bool
				select {
				case ev, ok = <-w.ResultChan():
				case <-wctx.Done():
					return
				}
				now := time.Now()
				if !ok {
					if wctx.Err() == nil {
						errs[wi] = fmt.Errorf("watch %d closed early", wi)
					}
					return
				}
				if ev.Type == watch.Error {
					errs[wi] = fmt.Errorf("watch %d: error event %v", wi, ev.Object)
					return
				}
				obj, isCM := ev.Object.(*corev1.ConfigMap)
				if ev.Type != watch.Modified || !isCM {
					continue
				}
				a := obj.Annotations
				run, err1 := strconv.Atoi(a[annRun])
				seq, err2 := strconv.Atoi(a[annSeq])
				sent, err3 := strconv.ParseInt(a[annSent], 10, 64)
				if err1 != nil || err2 != nil || err3 != nil || run < 0 || run > runs {
					continue
				}
				if run < runs {
					recs[wi] = append(recs[wi], received{run: run, seq: seq, delay: now.Sub(time.Unix(0, sent))})
				}
				counts[run].Add(1)
			}
		}()
	}

	updateLat := make([][]time.Duration, runs)
	update := func(run, seq int) error {
		cm = cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Annotations[annRun] = strconv.Itoa(run)
		cm.Annotations[annSeq] = strconv.Itoa(seq)
		cm.Data["key"] = fmt.Sprintf("value-%d-%d", run, seq)
		sent := time.Now()
		cm.Annotations[annSent] = strconv.FormatInt(sent.UnixNano(), 10)
		out, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating configmap %s/%s: %w", ns, cm.Name, err)
		}
		if run < runs {
			updateLat[run] = append(updateLat[run], time.Since(sent))
		}
		cm = out
		return nil
	}
	waitFor := func(c *atomic.Int64, want int64, timeout time.Duration) bool {
		deadline := time.Now().Add(timeout)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for c.Load() < want && time.Now().Before(deadline) {
			select {
			case <-t.C:
			case <-ctx.Done():
				return false
			}
		}
		return c.Load() >= want
	}

	// Every watch is live once each has seen one untimed update.
	if err := update(runs, 0); err != nil {
		return err
	}
	if !waitFor(&counts[runs], int64(b.o.watchers), time.Minute) {
		n := counts[runs].Load()
		cancel()
		wg.Wait()
		return fmt.Errorf("only %d of %d watchers saw the first update: %v", n, b.o.watchers, firstErr(errs))
	}

	// The process's CPU per update of each run, from its first write until
	// its last event arrived at every watcher.
	cpus := make([]time.Duration, len(b.o.watchRates))
	for run, rate := range b.o.watchRates {
		progress("watch run %d: %d updates, %s, %d watchers", run, b.o.watchWrites, rateName(rate), b.o.watchers)
		start, cpu0 := time.Now(), sampleCPU().self
		for seq := range b.o.watchWrites {
			if rate > 0 {
				at := start.Add(time.Duration(float64(seq) * float64(time.Second) / rate))
				// Pace the writes to the rate (a load shape, not a wait for a condition).
				if d := time.Until(at); d > 0 {
					select {
					case <-time.After(d):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			if err := update(run, seq); err != nil {
				return err
			}
		}
		want := int64(b.o.watchWrites * b.o.watchers)
		if !waitFor(&counts[run], want, time.Minute) {
			progress("watch run %d: %d of %d events arrived within a minute", run, counts[run].Load(), want)
		}
		cpus[run] = (sampleCPU().self - cpu0) / time.Duration(b.o.watchWrites)
	}
	cancel()
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return err
	}

	for run, rate := range b.o.watchRates {
		var delays []time.Duration
		for _, rs := range recs {
			for _, r := range rs {
				if r.run == run {
					delays = append(delays, r.delay)
				}
			}
		}
		want := b.o.watchWrites * b.o.watchers
		s := summarize(delays)
		result := fmt.Sprintf("p50 %s, **p99 %s**, max %s; CPU %s per update", ms(s.p50), ms(s.p99), ms(s.max), ms(cpus[run]))
		result += "; " + delayParts(recs, run, updateLat[run])
		if s.n != want {
			result += fmt.Sprintf(" (%d of %d events arrived)", s.n, want)
		}
		b.add(row{
			benchmark: fmt.Sprintf("Watch delay, write to event, %d watchers", b.o.watchers),
			setting:   fmt.Sprintf("%d ConfigMap updates, %s; protobuf", b.o.watchWrites, rateName(rate)),
			result:    result,
			target:    "p99 < " + ms(watchTarget),
			met:       metStr(s.p99 < watchTarget && s.n == want),
		})
	}
	return nil
}

func rateName(rate float64) string {
	if rate == 0 {
		return "back-to-back from one writer"
	}
	return fmt.Sprintf("%g writes/s", rate)
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// delayParts splits the delays of one run by update: the update's own
// request (write to answer), the first watcher's delay and the spread from
// the first watcher to the last, each as p50/p99 over the updates.
func delayParts(recs [][]received, run int, updates []time.Duration) string {
	first, last := map[int]time.Duration{}, map[int]time.Duration{}
	for _, rs := range recs {
		for _, r := range rs {
			if r.run != run {
				continue
			}
			if f, ok := first[r.seq]; !ok || r.delay < f {
				first[r.seq] = r.delay
			}
			if l, ok := last[r.seq]; !ok || r.delay > l {
				last[r.seq] = r.delay
			}
		}
	}
	var firsts, spreads []time.Duration
	for seq, f := range first {
		firsts = append(firsts, f)
		spreads = append(spreads, last[seq]-f)
	}
	u, f, sp := summarize(updates), summarize(firsts), summarize(spreads)
	return fmt.Sprintf("update request p50 %s p99 %s; first watcher p50 %s p99 %s; first to last p50 %s p99 %s",
		ms(u.p50), ms(u.p99), ms(f.p50), ms(f.p99), ms(sp.p50), ms(sp.p99))
}
