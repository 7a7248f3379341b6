// ocipack writes a single-image OCI archive (an "oci-archive": the OCI image layout, tarred) from layer tarballs
// and an image configuration, without a daemon, a registry or root.
//
// Why a tool of our own rather than umoci/buildah: the output is a pure function of its inputs (gzip without name
// or time, fixed timestamps, sorted entries), so the same sources give the same image digest; and compressed layers
// are cached by the digest of their uncompressed content, so a rebuild only compresses the layers that changed.
//
//	ocipack -o dist/x.oci.tar -ref docker.io/portico/portico:0.1.0 [-ref ...]... -config cfg.json \
//	        -layer base.tar -layer node.tar -layer app.tar [-history "..."]... [-cache DIR]
//
// -ref is repeatable: each name gets its own entry in index.json, all pointing at the same manifest, so one archive
// (one set of blobs) carries several tags of one image; `ctr images import` creates one image name per entry.
//
// cfg.json holds the OCI "config" object (User, Entrypoint, Env, ...). A layer given as *.tar is gzip-compressed
// (or taken from the cache); *.tar.gz / *.tgz is used as it is. Prints the sizes on stdout: the archive, the sum of
// the compressed layers (what a pull transfers) and of the uncompressed layers (about what the image takes unpacked).
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type history struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// layer is one compressed blob and the digest of its uncompressed content (the config's diff_id).
type layer struct {
	blobPath   string
	digest     string
	size       int64
	diffID     string
	uncompSize int64
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var layers, hist, annotations, refs multi
	out := flag.String("o", "", "output oci-archive path")
	flag.Var(&refs, "ref", "image reference, e.g. docker.io/portico/portico:0.1.0 (repeatable: one index entry each, same manifest)")
	cfgPath := flag.String("config", "", "JSON file with the OCI image config's \"config\" object")
	cacheDir := flag.String("cache", "", "directory caching compressed layers by uncompressed digest (optional)")
	level := flag.Int("level", gzip.BestCompression, "gzip level for layers that are compressed here")
	arch := flag.String("arch", runtime.GOARCH, "image architecture")
	flag.Var(&layers, "layer", "layer tarball, bottom first (repeatable)")
	flag.Var(&hist, "history", "created_by text of the layer at the same position (repeatable, optional)")
	flag.Var(&annotations, "annotation", "manifest annotation key=value (repeatable)")
	flag.Parse()
	if *out == "" || len(refs) == 0 || *cfgPath == "" || len(layers) == 0 {
		fail(errors.New("usage: ocipack -o OUT -ref REF [-ref ...] -config CFG.json -layer L.tar [-layer ...]"))
	}
	seen := map[string]bool{}
	for _, r := range refs {
		if r == "" || seen[r] {
			fail(fmt.Errorf("-ref %q: empty or given twice", r))
		}
		seen[r] = true
	}
	if err := run(*out, refs, *cfgPath, *cacheDir, *level, *arch, layers, hist, annotations); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ocipack:", err)
	os.Exit(1)
}

// created is SOURCE_DATE_EPOCH when set (reproducible builds), else the Unix epoch: never the wall clock.
func created() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
	}
	return time.Unix(n, 0).UTC(), nil
}

func run(out string, refs []string, cfgPath, cacheDir string, level int, arch string, layerPaths, hist, annotations []string) error {
	when, err := created()
	if err != nil {
		return err
	}
	var cfgObj map[string]any
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &cfgObj); err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}

	work, err := os.MkdirTemp(filepath.Dir(out), ".ocipack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// Layers are compressed concurrently (one goroutine each; gzip is single-threaded).
	ls := make([]layer, len(layerPaths))
	errs := make([]error, len(layerPaths))
	var wg sync.WaitGroup
	for i, p := range layerPaths {
		wg.Add(1)
		go func(i int, p string) {
			defer wg.Done()
			ls[i], errs[i] = prepareLayer(p, work, cacheDir, level)
		}(i, p)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	stamp := when.Format(time.RFC3339)
	diffIDs := make([]string, len(ls))
	histories := make([]history, len(ls))
	for i, l := range ls {
		diffIDs[i] = l.diffID
		by := "ocipack " + filepath.Base(layerPaths[i])
		if i < len(hist) && hist[i] != "" {
			by = hist[i]
		}
		histories[i] = history{Created: stamp, CreatedBy: by}
	}
	imageConfig := map[string]any{
		"created":      stamp,
		"architecture": arch,
		"os":           "linux",
		"config":       cfgObj,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": diffIDs},
		"history":      histories,
	}
	cfgBlob, err := json.Marshal(imageConfig)
	if err != nil {
		return err
	}
	cfgDesc := blobDesc("application/vnd.oci.image.config.v1+json", cfgBlob)

	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        cfgDesc,
	}
	layerDescs := make([]descriptor, len(ls))
	for i, l := range ls {
		layerDescs[i] = descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: l.digest, Size: l.size}
	}
	manifest["layers"] = layerDescs
	if len(annotations) > 0 {
		a := map[string]string{}
		for _, kv := range annotations {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("annotation %q: expected key=value", kv)
			}
			a[k] = v
		}
		manifest["annotations"] = a
	}
	manBlob, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	manDesc := blobDesc("application/vnd.oci.image.manifest.v1+json", manBlob)
	manDesc.Platform = &platform{Architecture: arch, OS: "linux"}
	// One index entry per reference, in the order given, each the same manifest. The full reference goes in both
	// annotations: containerd (`ctr images import`, hence the kubelet's image store) names the image from
	// io.containerd.image.name; podman/skopeo/buildah read org.opencontainers.image.ref.name.
	entries := make([]descriptor, len(refs))
	for i, ref := range refs {
		entries[i] = manDesc
		entries[i].Annotations = map[string]string{
			"io.containerd.image.name":          ref,
			"org.opencontainers.image.ref.name": ref,
		}
	}
	index := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     entries,
	}
	idxBlob, err := json.Marshal(index)
	if err != nil {
		return err
	}

	// The archive: oci-layout, index.json, then the blobs (sorted, no duplicates), all with fixed metadata.
	tmp := filepath.Join(work, "out.tar")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: size, ModTime: when, Format: tar.FormatPAX}
	}
	writeBytes := func(name string, b []byte) error {
		if err := tw.WriteHeader(hdr(name, tar.TypeReg, 0o644, int64(len(b)))); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := writeBytes("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := writeBytes("index.json", idxBlob); err != nil {
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(hdr(d, tar.TypeDir, 0o755, 0)); err != nil {
			return err
		}
	}
	type blob struct {
		digest string
		bytes  []byte
		path   string
		size   int64
	}
	blobs := map[string]blob{
		cfgDesc.Digest: {digest: cfgDesc.Digest, bytes: cfgBlob},
		manDesc.Digest: {digest: manDesc.Digest, bytes: manBlob},
	}
	for _, l := range ls {
		blobs[l.digest] = blob{digest: l.digest, path: l.blobPath, size: l.size}
	}
	keys := make([]string, 0, len(blobs))
	for k := range blobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b := blobs[k]
		name := "blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:")
		if b.bytes != nil {
			if err := writeBytes(name, b.bytes); err != nil {
				return err
			}
			continue
		}
		if err := tw.WriteHeader(hdr(name, tar.TypeReg, 0o644, b.size)); err != nil {
			return err
		}
		src, err := os.Open(b.path)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}

	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	var compressed, unpacked int64
	for _, l := range ls {
		compressed += l.size
		unpacked += l.uncompSize
	}
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	_, err = fmt.Printf("%s: %s\n  archive %s, compressed layers %s, unpacked %s (%d layers), manifest %s\n",
		strings.Join(refs, ", "), out, mb(st.Size()), mb(compressed), mb(unpacked), len(ls), manDesc.Digest)
	return err
}

func blobDesc(mediaType string, b []byte) descriptor {
	sum := sha256.Sum256(b)
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}
}

type countingWriter struct {
	h hash.Hash
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// prepareLayer returns the compressed blob of a layer and both digests.
func prepareLayer(p, work, cacheDir string, level int) (layer, error) {
	if strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz") {
		return compressedLayer(p)
	}
	// The uncompressed digest first: it is the diff_id and the cache key (hashing is far cheaper than gzip).
	diff, n, err := digestFile(p)
	if err != nil {
		return layer{}, err
	}
	cached := ""
	if cacheDir != "" {
		cached = filepath.Join(cacheDir, fmt.Sprintf("%s.l%d.tar.gz", strings.TrimPrefix(diff, "sha256:"), level))
		if _, err := os.Stat(cached); err == nil {
			l, err := compressedLayer(cached)
			if err == nil && l.diffID == diff {
				return l, nil
			}
		}
	}
	dst := filepath.Join(work, strings.TrimPrefix(diff, "sha256:")+".tar.gz")
	if err := gzipFile(p, dst, level); err != nil {
		return layer{}, err
	}
	if cached != "" {
		if err := os.MkdirAll(cacheDir, 0o755); err == nil {
			// Copy into the cache through a temporary name, so a concurrent or interrupted build never sees half a blob.
			if err := copyFile(dst, cached+".tmp"); err == nil {
				_ = os.Rename(cached+".tmp", cached)
			}
		}
	}
	l, err := compressedLayer(dst)
	if err != nil {
		return layer{}, err
	}
	if l.diffID != diff || l.uncompSize != n {
		return layer{}, fmt.Errorf("%s: compressed layer does not round-trip", p)
	}
	return l, nil
}

func digestFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// compressedLayer reads a gzip blob once: digest and size of the blob, digest and size of its content.
func compressedLayer(p string) (layer, error) {
	f, err := os.Open(p)
	if err != nil {
		return layer{}, err
	}
	defer f.Close()
	outer := &countingWriter{h: sha256.New()}
	zr, err := gzip.NewReader(io.TeeReader(bufio.NewReaderSize(f, 1<<20), outer))
	if err != nil {
		return layer{}, fmt.Errorf("%s: %w", p, err)
	}
	inner := &countingWriter{h: sha256.New()}
	if _, err := io.Copy(inner, zr); err != nil {
		return layer{}, fmt.Errorf("%s: %w", p, err)
	}
	// Drain whatever follows the gzip stream so the blob digest covers the whole file.
	if _, err := io.Copy(outer, f); err != nil {
		return layer{}, err
	}
	return layer{
		blobPath: p, digest: "sha256:" + hex.EncodeToString(outer.h.Sum(nil)), size: outer.n,
		diffID: "sha256:" + hex.EncodeToString(inner.h.Sum(nil)), uncompSize: inner.n,
	}, nil
}

func gzipFile(src, dst string, level int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	// No name, no modification time in the gzip header: the blob depends on the content only.
	zw, err := gzip.NewWriterLevel(bw, level)
	if err != nil {
		out.Close()
		return err
	}
	if _, err := io.Copy(zw, bufio.NewReaderSize(in, 1<<20)); err != nil {
		out.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		out.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
