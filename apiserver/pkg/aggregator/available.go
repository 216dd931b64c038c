package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Run checks the APIServices queued by the feeds, and every remote one
// each ResyncInterval, until ctx ends.
func (a *Aggregator) Run(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		a.queue.ShutDown()
	}()
	go func() {
		t := time.NewTicker(a.cfg.ResyncInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.st.mu.RLock()
				for n, api := range a.st.apis {
					if api.Spec.Service != nil {
						a.queue.Add(n)
					}
				}
				a.st.mu.RUnlock()
			}
		}
	}()
	const workers = 2
	done := make(chan struct{}, workers)
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for a.processNext(ctx) {
			}
		}()
	}
	for range workers {
		<-done
	}
	return nil
}

func (a *Aggregator) processNext(ctx context.Context) bool {
	name, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(name)
	if err := a.sync(ctx, name); err != nil {
		klog.FromContext(ctx).V(2).Info("checking an APIService failed, retrying", "apiservice", name, "err", err)
		a.queue.AddRateLimited(name)
		return true
	}
	a.queue.Forget(name)
	return true
}

// sync computes the Available condition of one APIService, as upstream's
// availability controller: Local for a local one; for a remote one the
// Service must exist and listen on the port, have a ready endpoint, and
// answer a discovery GET of /apis/<group>/<version> with a 2xx within the
// timeout. It writes the condition when it changed.
func (a *Aggregator) sync(ctx context.Context, name string) error {
	api, ok := a.st.apiService(name)
	if !ok {
		return nil
	}
	cond := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue}
	if api.Spec.Service == nil {
		cond.Reason, cond.Message = ReasonLocal, "Local APIServices are always available"
	} else if list, err := a.check(ctx, api); err != nil {
		cond.Status = apiregistrationv1.ConditionFalse
		if re, ok := err.(*resolveError); ok {
			cond.Reason, cond.Message = re.reason, re.message
		} else {
			cond.Reason, cond.Message = ReasonFailedDiscoveryCheck, err.Error()
		}
		a.st.setDiscovery(name, nil)
	} else {
		cond.Reason, cond.Message = ReasonPassed, "all checks passed"
		a.st.setDiscovery(name, list)
	}
	if a.cfg.Unavailable != nil {
		v := 0.0
		if cond.Status != apiregistrationv1.ConditionTrue {
			v = 1
		}
		a.cfg.Unavailable.WithLabelValues(name).Set(v)
	}
	for _, c := range api.Status.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			return nil
		}
	}
	if cond.Status != apiregistrationv1.ConditionTrue && a.cfg.UnavailableTotal != nil {
		a.cfg.UnavailableTotal.WithLabelValues(name, cond.Reason).Inc()
	}
	cond.LastTransitionTime = metav1.NewTime(a.cfg.Now())
	if a.cfg.UpdateStatus == nil {
		return nil
	}
	return a.cfg.UpdateStatus(ctx, name, cond)
}

// check resolves the APIService's endpoint and asks it for the
// group-version's resource list.
func (a *Aggregator) check(ctx context.Context, api *apiregistrationv1.APIService) (*metav1.APIResourceList, error) {
	target, err := a.resolve(api)
	if err != nil {
		return nil, err
	}
	tr, err := a.transports.For(api)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.DiscoveryTimeout)
	defer cancel()
	u := *target
	u.Path = "/apis/" + api.Spec.Group + "/" + api.Spec.Version
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	// The check is the aggregator's own: upstream sends it as
	// system:kube-aggregator.
	req.Header.Set(HeaderUser, "system:kube-aggregator")
	req.Header.Add(HeaderGroup, "system:masters")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %v", u.String(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %v", u.String(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, fmt.Errorf("failing or missing response from %s: bad status from %s: %d", u.String(), u.String(), resp.StatusCode)
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(body, list); err != nil || list.GroupVersion == "" {
		// Available all the same, as upstream; discovery has no
		// resources to list for it.
		list = &metav1.APIResourceList{GroupVersion: api.Spec.Group + "/" + api.Spec.Version}
	}
	return list, nil
}
