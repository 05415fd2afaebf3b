// Command talos-ref is the Go reference reader for benchmarks: per address it makes, with
// Talos's own client library, the calls an inspection makes, and prints one JSON line per node
// with the timing of each call.
//
// With --endpoint E it reads the nodes as talosctl 1.14 does (reference/cni.md §5.6): one client,
// one connection to E, and each node's calls with that node in the call's context
// (client.WithNode: single-valued `node` metadata), which E's apid forwards.
//
//	talos-ref --talosconfig F [--concurrency N] [--insecure] [--endpoint E] ADDR...
//
// With --apply-config FILE it instead applies FILE's bytes to each address, as
// `talosctl apply-config --mode no-reboot -f FILE` does (the tests restore a backup with it), and
// prints one JSON line per node with the outcome.
//
// With --patch FILE it patches each node's configuration as `talosctl patch mc --patch @FILE`
// does (ADR 0128 E7): the node's MachineConfig read through COSI, FILE applied with Talos's
// configpatcher (strategic merge or JSON patch), the result applied with ApplyConfiguration in
// mode auto. With --reboot it reboots each node as `talosctl reboot` does (MachineService.Reboot,
// mode default). Both print one JSON line per node.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	configpb "github.com/siderolabs/talos/pkg/machinery/api/resource/config"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const callTimeout = 20 * time.Second

type call struct {
	Name  string  `json:"name"`
	MS    float64 `json:"ms"`
	Code  string  `json:"code"`
	Error string  `json:"error,omitempty"`
	Items int     `json:"items,omitempty"`
}

type result struct {
	Address  string  `json:"address"`
	OK       bool    `json:"ok"`
	Hostname string  `json:"hostname,omitempty"`
	Version  string  `json:"version,omitempty"`
	Role     string  `json:"role,omitempty"`
	TotalMS  float64 `json:"totalMs"`
	Calls    []call  `json:"calls"`
	Error    string  `json:"error,omitempty"`
}

func main() {
	talosconfig := flag.String("talosconfig", "", "talosconfig file (its current context)")
	concurrency := flag.Int("concurrency", 16, "nodes read at the same time")
	insecure := flag.Bool("insecure", false, "maintenance mode: no client certificate, no server verification")
	endpoint := flag.String("endpoint", "", "reach every node through this endpoint, the node in each call's context")
	applyConfig := flag.String("apply-config", "", "apply this file's bytes to each node (mode no-reboot) instead of reading it")
	patchFile := flag.String("patch", "", "patch each node's configuration with this file, as talosctl patch mc --patch @FILE does")
	reboot := flag.Bool("reboot", false, "reboot each node, as talosctl reboot does")
	flag.Parse()

	if (*talosconfig == "" && !*insecure) || flag.NArg() == 0 || *concurrency < 1 || (*endpoint != "" && *insecure) {
		fmt.Fprintln(os.Stderr, "usage: talos-ref --talosconfig F [--concurrency N] [--insecure | --endpoint E] ADDR...")
		os.Exit(2)
	}

	var cfg *clientconfig.Config

	if *talosconfig != "" {
		var err error

		if cfg, err = clientconfig.Open(*talosconfig); err != nil {
			fmt.Fprintf(os.Stderr, "talos-ref: %v\n", err)
			os.Exit(3)
		}
	}

	if *applyConfig != "" {
		os.Exit(applyAll(cfg, *applyConfig, flag.Args()))
	}

	if *patchFile != "" {
		os.Exit(patchAll(cfg, *patchFile, flag.Args()))
	}

	if *reboot {
		os.Exit(eachNode(cfg, flag.Args(), "Reboot", func(ctx context.Context, c *client.Client) error {
			_, err := c.MachineClient.Reboot(ctx, &machine.RebootRequest{})

			return err
		}))
	}

	// Through an endpoint: one client, so one connection, for every node.
	var shared *client.Client

	if *endpoint != "" {
		var err error

		if shared, err = client.New(context.Background(), client.WithConfig(cfg), client.WithEndpoints(*endpoint)); err != nil {
			fmt.Fprintf(os.Stderr, "talos-ref: %v\n", err)
			os.Exit(3)
		}

		defer shared.Close() //nolint:errcheck
	}

	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed bool
		sem    = make(chan struct{}, *concurrency)
	)

	for _, addr := range flag.Args() {
		wg.Add(1)

		go func() {
			defer wg.Done()

			sem <- struct{}{}
			r := read(cfg, *insecure, shared, addr)
			<-sem

			line, _ := json.Marshal(r) //nolint:errcheck,errchkjson

			mu.Lock()
			defer mu.Unlock()

			failed = failed || !r.OK
			os.Stdout.Write(append(line, '\n')) //nolint:errcheck
		}()
	}

	wg.Wait()

	if failed {
		os.Exit(1)
	}
}

func read(cfg *clientconfig.Config, insecure bool, shared *client.Client, addr string) result {
	start := time.Now()
	r := result{Address: addr, Calls: []call{}}

	c := shared
	base := context.Background()

	if shared != nil {
		base = client.WithNode(base, addr)
	} else {
		opts := []client.OptionFunc{client.WithEndpoints(addr)}
		if insecure {
			opts = append(opts, client.WithTLSConfig(&tls.Config{InsecureSkipVerify: true})) //nolint:gosec
		} else {
			opts = append(opts, client.WithConfig(cfg))
		}

		var err error

		c, err = client.New(context.Background(), opts...)
		if err != nil {
			r.Error = err.Error()

			return r
		}

		defer c.Close() //nolint:errcheck
	}

	state := cosiv1alpha1.NewStateClient(c.Conn())

	do := func(name string, f func(ctx context.Context) (int, error)) error {
		ctx, cancel := context.WithTimeout(base, callTimeout)
		defer cancel()

		t0 := time.Now()
		items, err := f(ctx)
		cl := call{Name: name, MS: float64(time.Since(t0).Microseconds()) / 1000, Code: status.Code(err).String(), Items: items}

		if err != nil {
			cl.Error = status.Convert(err).Message()
		}

		r.Calls = append(r.Calls, cl)

		return err
	}

	get := func(ns, typ, id string) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			resp, err := state.Get(ctx, &cosiv1alpha1.GetRequest{Namespace: ns, Type: typ, Id: id})
			if err == nil && typ == "MachineTypes.config.talos.dev" {
				r.Role = resp.GetResource().GetSpec().GetYamlSpec()
			}

			return 1, err
		}
	}

	list := func(ns, typ string) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			stream, err := state.List(ctx, &cosiv1alpha1.ListRequest{Namespace: ns, Type: typ})
			if err != nil {
				return 0, err
			}

			n := 0

			for {
				if _, err := stream.Recv(); err != nil {
					if err == io.EOF {
						return n, nil
					}

					return n, err
				}

				n++
			}
		}
	}

	// The calls of common/stages/inspect.cpp, in its order: identity, status, then (configured)
	// the configuration with its facts, Infos, MachineTypes only when the configuration could not
	// be read, then storage, etcd unless the node is a worker, and the node identity.
	var errs []error

	errs = append(errs, do("Version", func(ctx context.Context) (int, error) {
		resp, err := c.Version(ctx)
		if err == nil {
			r.Version = resp.GetMessages()[0].GetVersion().GetTag()
		}

		return 1, err
	}))

	errs = append(errs,
		do("SystemInformations", get("hardware", "SystemInformations.hardware.talos.dev", "systeminformation")),
		do("LinkStatuses", list("network", "LinkStatuses.net.talos.dev")),
		do("Hostname", func(ctx context.Context) (int, error) {
			resp, err := c.MachineClient.Hostname(ctx, nil)
			if err == nil {
				r.Hostname = resp.GetMessages()[0].GetHostname()
			}

			return 1, err
		}),
		do("MachineStatuses", get("runtime", "MachineStatuses.runtime.talos.dev", "machine")),
	)

	if !insecure {
		// The role comes from the configuration, loaded with Talos's configloader, as the C++
		// reader takes it from its parsed configuration.
		var configBytes []byte

		errs = append(errs, do("MachineConfigs", func(ctx context.Context) (int, error) {
			resp, err := state.Get(ctx, &cosiv1alpha1.GetRequest{Namespace: "config", Type: "MachineConfigs.config.talos.dev", Id: "v1alpha1"})
			configBytes = resp.GetResource().GetSpec().GetProtoSpec()

			return 1, err
		}))

		var spec configpb.MachineConfigSpec
		if configBytes != nil && proto.Unmarshal(configBytes, &spec) == nil {
			if cfg, err := configloader.NewFromBytes(spec.GetYamlMarshalled()); err == nil && cfg.Machine() != nil {
				r.Role = cfg.Machine().Type().String()
			}
		}

		errs = append(errs, do("Infos", get("cluster", "Infos.cluster.talos.dev", "current")))

		if r.Role == "" {
			errs = append(errs, do("MachineTypes", get("config", "MachineTypes.config.talos.dev", "machine-type")))
		}
	}

	errs = append(errs,
		do("VolumeStatuses", list("runtime", "VolumeStatuses.block.talos.dev")),
		do("Disks", list("runtime", "Disks.block.talos.dev")),
	)

	if !insecure {
		if strings.TrimSpace(r.Role) != "worker" {
			// As the C++ reader: EtcdStatus only when the member list came back.
			membersErr := do("EtcdMemberList", func(ctx context.Context) (int, error) {
				resp, err := c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})

				n := 0
				for _, m := range resp.GetMessages() {
					n += len(m.GetMembers())
				}

				return n, err
			})
			errs = append(errs, membersErr)

			if membersErr == nil {
				errs = append(errs, do("EtcdStatus", func(ctx context.Context) (int, error) {
					_, err := c.EtcdStatus(ctx)

					return 1, err
				}))
			}
		}

		errs = append(errs, do("Identities", get("cluster", "Identities.cluster.talos.dev", "local")))
	}

	if len(r.Role) > 0 && r.Role[len(r.Role)-1] == '\n' {
		r.Role = r.Role[:len(r.Role)-1]
	}

	r.OK = true

	for _, err := range errs {
		if err != nil {
			r.OK = false
		}
	}

	r.TotalMS = float64(time.Since(start).Microseconds()) / 1000

	return r
}

// applyAll applies the bytes of path to each address with Talos's client, one after the other.
func applyAll(cfg *clientconfig.Config, path string, addrs []string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "talos-ref: %v\n", err)

		return 3
	}

	rc := 0

	for _, addr := range addrs {
		r := result{Address: addr, Calls: []call{}}

		func() {
			c, err := client.New(context.Background(), client.WithConfig(cfg), client.WithEndpoints(addr))
			if err != nil {
				r.Error = err.Error()

				return
			}

			defer c.Close() //nolint:errcheck

			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()

			t0 := time.Now()
			_, err = c.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: data, Mode: machine.ApplyConfigurationRequest_NO_REBOOT})
			cl := call{Name: "ApplyConfiguration", MS: float64(time.Since(t0).Microseconds()) / 1000, Code: status.Code(err).String()}

			if err != nil {
				cl.Error = status.Convert(err).Message()
				r.Error = cl.Error
			}

			r.Calls = append(r.Calls, cl)
			r.OK = err == nil
		}()

		if !r.OK {
			rc = 1
		}

		line, _ := json.Marshal(r)          //nolint:errcheck,errchkjson
		os.Stdout.Write(append(line, '\n')) //nolint:errcheck
	}

	return rc
}

// patchAll patches each node's configuration with the patch file, as talosctl patch mc does.
func patchAll(cfg *clientconfig.Config, path string, addrs []string) int {
	patches, err := configpatcher.LoadPatches([]string{"@" + path})
	if err != nil {
		fmt.Fprintf(os.Stderr, "talos-ref: %v\n", err)

		return 3
	}

	return eachNode(cfg, addrs, "ApplyConfiguration", func(ctx context.Context, c *client.Client) error {
		state := cosiv1alpha1.NewStateClient(c.Conn())

		resp, err := state.Get(ctx, &cosiv1alpha1.GetRequest{Namespace: "config", Type: "MachineConfigs.config.talos.dev", Id: "v1alpha1"})
		if err != nil {
			return err
		}

		var spec configpb.MachineConfigSpec
		if err := proto.Unmarshal(resp.GetResource().GetSpec().GetProtoSpec(), &spec); err != nil {
			return err
		}

		out, err := configpatcher.Apply(configpatcher.WithBytes(spec.GetYamlMarshalled()), patches)
		if err != nil {
			return err
		}

		data, err := out.Bytes()
		if err != nil {
			return err
		}

		_, err = c.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: data, Mode: machine.ApplyConfigurationRequest_AUTO})

		return err
	})
}

// eachNode makes one call on each address with Talos's client, one node after the other, and
// prints one JSON line per node.
func eachNode(cfg *clientconfig.Config, addrs []string, name string, f func(context.Context, *client.Client) error) int {
	rc := 0

	for _, addr := range addrs {
		r := result{Address: addr, Calls: []call{}}

		func() {
			c, err := client.New(context.Background(), client.WithConfig(cfg), client.WithEndpoints(addr))
			if err != nil {
				r.Error = err.Error()

				return
			}

			defer c.Close() //nolint:errcheck

			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()

			t0 := time.Now()
			err = f(ctx, c)
			cl := call{Name: name, MS: float64(time.Since(t0).Microseconds()) / 1000, Code: status.Code(err).String()}

			if err != nil {
				cl.Error = status.Convert(err).Message()
				r.Error = cl.Error
			}

			r.Calls = append(r.Calls, cl)
			r.OK = err == nil
		}()

		if !r.OK {
			rc = 1
		}

		line, _ := json.Marshal(r)          //nolint:errcheck,errchkjson
		os.Stdout.Write(append(line, '\n')) //nolint:errcheck
	}

	return rc
}
