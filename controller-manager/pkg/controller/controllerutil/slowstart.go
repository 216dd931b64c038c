package controllerutil

import "sync"

// SlowStartInitialBatchSize is the first batch size upstream's controllers
// use.
const SlowStartInitialBatchSize = 1

// SlowStartBatch calls fn count times in parallel batches whose size starts
// at initialBatchSize and doubles after each batch that fully succeeds. It
// stops after the first batch with an error, so a request that fails (quota,
// a webhook, a terminating namespace) fails a few times instead of count
// times. It returns how many calls succeeded and one of the errors.
func SlowStartBatch(count, initialBatchSize int, fn func() error) (int, error) {
	remaining := count
	successes := 0
	for batch := min(remaining, initialBatchSize); batch > 0; batch = min(2*batch, remaining) {
		errCh := make(chan error, batch)
		var wg sync.WaitGroup
		wg.Add(batch)
		for range batch {
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errCh <- err
				}
			}()
		}
		wg.Wait()
		successes += batch - len(errCh)
		if len(errCh) > 0 {
			return successes, <-errCh
		}
		remaining -= batch
	}
	return successes, nil
}
