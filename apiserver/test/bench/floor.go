package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// floorPhase measures what any Kubernetes API server on this machine must
// at least spend on a create, with nothing of skiff's: an HTTPS server
// (Go's net/http, HTTP/2, skiff's certificate and client CA) whose one
// handler decodes the Pod, gives it a uid and a creation time, encodes it in
// protobuf, writes it to the same etcd with the same create-if-absent
// transaction through the in-process client skiff uses, and answers 201
// with the Pod encoded as the client asked. Beyond the TLS handshake's check
// of the client certificate: no authentication, authorization, admission,
// defaulting, validation, managed fields or watch cache. The create phase's
// clients drive it. Its creates/s is the ceiling of the create target: an
// API server cannot do less per create and still answer the Kubernetes API.
func (b *bench) floorPhase(ctx context.Context) error {
	url, stop, err := b.startFloorServer(ctx, &floorServer{prefix: "/bench-floor/pods/"})
	if err != nil {
		return err
	}
	defer stop()
	for _, ct := range contentTypes {
		clients := make([]*kubernetes.Clientset, b.o.clients)
		for i := range clients {
			// The create phase's clients: same user, certificates and codecs.
			if clients[i], err = b.newClientTo(url, ct.mediaType); err != nil {
				return err
			}
			// Connect (TLS and HTTP/2) before the measurement.
			if _, err := clients[i].CoreV1().Pods("warm-up").Create(ctx, benchPod(fmt.Sprintf("%s-%d", ct.slug, i), i), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("floor server: %w", err)
			}
		}
		ns := "bench-floor-" + ct.slug
		progress("floor: creating %d pods with %d %s clients on a server that only decodes, stores and encodes", b.o.creates, b.o.clients, ct.name)
		r, err := createPods(ctx, clients, ns, "pod", b.o.creates, b.o.duration)
		if err != nil {
			return err
		}
		s := summarize(r.latencies)
		b.add(row{
			benchmark: "Pod create, floor server (decode, etcd write, encode), client-go " + ct.name,
			setting:   fmt.Sprintf("%d clients, %d pods, HTTPS/HTTP2 server with one handler, same etcd and client", b.o.clients, r.n),
			result:    fmt.Sprintf("**%.0f creates/s**, p50 %s, p99 %s", r.rate(), ms(s.p50), ms(s.p99)),
		})
		if base := b.etcdRate["gRPC"]; base > 0 {
			b.add(row{
				benchmark: "Floor server creates / etcd writes, " + ct.name,
				setting:   fmt.Sprintf("%.0f creates/s ÷ %.0f writes/s (gRPC)", r.rate(), base),
				result:    fmt.Sprintf("**%.0f%%**", 100*r.rate()/base),
			})
		}
		if api, ok := b.createRate[ct.mediaType]; ok {
			b.add(row{
				benchmark: "skiff creates / floor server creates, " + ct.name,
				setting:   fmt.Sprintf("%.0f creates/s ÷ %.0f creates/s", api, r.rate()),
				result:    fmt.Sprintf("**%.0f%%**", 100*api/r.rate()),
			})
		}
	}
	return nil
}

// startFloorServer serves f over HTTPS on loopback, with skiff's own
// serving certificate and client CA, writing to the bench server's etcd;
// stop closes it.
func (b *bench) startFloorServer(ctx context.Context, f *floorServer) (url string, stop func(), err error) {
	// skiff's own serving certificate and client CA, as skiff checks them.
	cert, err := tls.LoadX509KeyPair(filepath.Join(b.ts.PKIDir, "apiserver.crt"), filepath.Join(b.ts.PKIDir, "apiserver.key"))
	if err != nil {
		return "", nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(b.ts.PKIDir, "ca.crt"))
	if err != nil {
		return "", nil, err
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(caPEM) {
		return "", nil, fmt.Errorf("no certificate in %s", filepath.Join(b.ts.PKIDir, "ca.crt"))
	}
	if f.storage, err = serializerFor(contentProtobuf); err != nil {
		return "", nil, err
	}
	f.etcd = b.ts.Server.EtcdClient()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler: f,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientCAs:    clientCAs,
			ClientAuth:   tls.VerifyClientCertIfGiven,
			NextProtos:   []string{"h2", "http/1.1"},
		},
	}
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	pprof.Do(ctx, pprof.Labels("side", "floor"), func(context.Context) {
		go func() { done <- srv.ServeTLS(ln, "", "") }()
		go func() {
			defer close(watched)
			if f.watch {
				f.watchPods(wctx)
			}
		}()
	})
	return "https://" + ln.Addr().String(), func() {
		cancel()
		<-watched
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			progress("floor server: %v", err)
		}
	}, nil
}

// watchPods decodes every pod written under f.prefix into a map, until ctx
// ends: the least a watch cache does.
func (f *floorServer) watchPods(ctx context.Context) {
	pods := map[string]*corev1.Pod{}
	for resp := range f.etcd.Watch(ctx, f.prefix, clientv3.WithPrefix()) {
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				delete(pods, string(ev.Kv.Key))
				continue
			}
			pod := &corev1.Pod{}
			if _, _, err := f.storage.Serializer.Decode(ev.Kv.Value, nil, pod); err != nil {
				progress("floor server: decoding %s: %v", ev.Kv.Key, err)
				continue
			}
			pods[string(ev.Kv.Key)] = pod
		}
	}
}

// floorServer answers a Pod create, and nothing else.
type floorServer struct {
	etcd    *clientv3.Client
	prefix  string
	storage runtime.SerializerInfo
	// prepare, when set, is applied to each decoded pod before it is
	// stored (the chainfloor phase's stand-in for what a server adds); an
	// error answers 422.
	prepare func(*corev1.Pod) error
	// watch: the server also watches its prefix and decodes every event
	// into a map of the pods, as any API server's watch cache must.
	watch bool
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// api/v1/namespaces/<ns>/pods
	if r.Method != http.MethodPost || len(parts) != 5 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		http.Error(w, "the floor server only creates pods", http.StatusNotFound)
		return
	}
	ns := parts[3]
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	in, err := serializerFor(r.Header.Get("Content-Type"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnsupportedMediaType)
		return
	}
	pod := &corev1.Pod{}
	if _, _, err := in.Serializer.Decode(body, nil, pod); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pod.Namespace = ns
	pod.UID = types.UID(uuid.NewUUID())
	pod.CreationTimestamp = metav1.Now()
	if f.prepare != nil {
		if err := f.prepare(pod); err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
	}
	stored, err := encode(f.storage, pod)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	key := f.prefix + ns + "/" + pod.Name
	resp, err := f.etcd.Txn(r.Context()).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(stored))).
		Commit()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !resp.Succeeded {
		http.Error(w, "exists", http.StatusConflict)
		return
	}
	pod.ResourceVersion = fmt.Sprint(resp.Header.Revision)
	out, err := serializerFor(r.Header.Get("Accept"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotAcceptable)
		return
	}
	data, err := encode(out, pod)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", out.MediaType)
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(data)
}

// serializerFor picks client-go's serializer for the first media type of
// header that it has.
func serializerFor(header string) (runtime.SerializerInfo, error) {
	for _, part := range strings.Split(header, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mt); ok {
			return info, nil
		}
	}
	return runtime.SerializerInfo{}, fmt.Errorf("no serializer for %q", header)
}

func encode(info runtime.SerializerInfo, pod *corev1.Pod) ([]byte, error) {
	return runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), pod)
}
