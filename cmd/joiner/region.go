package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// regionSources are where the CLI's AWS commands (explain, simulate --cluster, doctor) look for
// the cluster's AWS region, in order; resolveRegion reads them.
type regionSources struct {
	// Flag is the region flag's value when it was given on the command line; FlagName names it.
	Flag, FlagName string
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Profile returns the region of the shared AWS config's profile (sharedConfigRegion), and
	// the profile's name; "" when it names none. Nil skips it.
	Profile func(ctx context.Context) (region, profile string, err error)
	// Cluster is read last: the topology.kubernetes.io/region label of Node (a Node's or a
	// NodeClaim's name, when the command is about one), else of the NodeClaims, else of the
	// Nodes. Nil skips it.
	Cluster client.Reader
	Node    string
}

// regionHelp is the paragraph of the commands' help that says where the region comes from
// (resolveRegion's order); flag is the command's region flag.
func regionHelp(flag string) string {
	return `The AWS region is ` + flag + `'s, else AWS_REGION's, AWS_DEFAULT_REGION's or the shared AWS
config profile's, else the topology.kubernetes.io/region label of the node, the NodeClaims or
the nodes of the cluster; the command says on standard error which it used.`
}

// regionFlagUsage is the --aws-region flag's usage where resolveRegion reads it.
const regionFlagUsage = "Without --instance-types: the cluster's AWS region; default AWS_REGION, AWS_DEFAULT_REGION, the shared config's profile, else the cluster's topology.kubernetes.io/region label"

// clusterSampleSize bounds the NodeClaims and Nodes read for their region label: a cluster is in
// one region, so a page of them says which, and a large cluster is not listed whole for it.
const clusterSampleSize = 100

// resolveRegion returns the region the command is to read AWS in and where it was found, in the
// order an AWS user expects and then from the cluster itself: the flag, AWS_REGION,
// AWS_DEFAULT_REGION, the shared config's profile (as the AWS CLI and SDKs read them), then the
// topology.kubernetes.io/region label the cluster's nodes carry (the kubelet's cloud provider and
// Joiner's NodeClaims set it). An empty region with a nil error means no source named one.
// NodeClaims or Nodes naming different regions are an error: only the flag can say which.
func resolveRegion(ctx context.Context, s regionSources) (region, source string, err error) {
	if s.Flag != "" {
		return s.Flag, s.FlagName, nil
	}
	for _, env := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if r := s.Getenv(env); r != "" {
			return r, "$" + env, nil
		}
	}
	if s.Profile != nil {
		r, profile, err := s.Profile(ctx)
		if err != nil {
			return "", "", err
		}
		if r != "" {
			return r, fmt.Sprintf("profile %s of the shared AWS config", profile), nil
		}
	}
	if s.Cluster == nil {
		return "", "", nil
	}
	return clusterRegion(ctx, s.Cluster, s.Node, s.FlagName)
}

// clusterRegion reads the region label of the named Node or NodeClaim, else of the NodeClaims,
// else of the Nodes.
func clusterRegion(ctx context.Context, kube client.Reader, name, flag string) (region, source string, err error) {
	label := corev1.LabelTopologyRegion
	if name != "" {
		for _, o := range []struct {
			kind string
			obj  client.Object
		}{{"node", &corev1.Node{}}, {"NodeClaim", &v1.NodeClaim{}}} {
			err := kube.Get(ctx, client.ObjectKey{Name: name}, o.obj)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return "", "", fmt.Errorf("reading %s %s for its %s label (or pass %s), %w", o.kind, name, label, flag, err)
			}
			if r := o.obj.GetLabels()[label]; r != "" {
				return r, fmt.Sprintf("%s %s's %s label", o.kind, name, label), nil
			}
		}
	}
	for _, l := range []struct {
		kind string
		list client.ObjectList
	}{{"NodeClaims", &v1.NodeClaimList{}}, {"nodes", &corev1.NodeList{}}} {
		if err := kube.List(ctx, l.list, client.HasLabels{label}, client.Limit(clusterSampleSize)); err != nil {
			return "", "", fmt.Errorf("listing %s for their %s label (or pass %s), %w", l.kind, label, flag, err)
		}
		byRegion := map[string][]string{}
		var regions []string
		items, err := apimeta.ExtractList(l.list)
		if err != nil {
			return "", "", fmt.Errorf("reading the %s listed, %w", l.kind, err)
		}
		for _, item := range items {
			o, ok := item.(client.Object)
			if !ok {
				continue
			}
			r := o.GetLabels()[label]
			if r == "" {
				continue
			}
			if byRegion[r] == nil {
				regions = append(regions, r)
			}
			byRegion[r] = append(byRegion[r], o.GetName())
		}
		switch len(regions) {
		case 0:
			continue
		case 1:
			names := byRegion[regions[0]]
			return regions[0], fmt.Sprintf("the %s label of %s %s", label, l.kind, strings.Join(sample(names), ", ")), nil
		default:
			slices.Sort(regions)
			var each []string
			for _, r := range regions {
				each = append(each, fmt.Sprintf("%s (%s)", r, strings.Join(sample(byRegion[r]), ", ")))
			}
			return "", "", fmt.Errorf("the cluster's %s name several regions in their %s label: %s; pass %s", l.kind, label, strings.Join(each, ", "), flag)
		}
	}
	return "", "", nil
}

// sample is the first three names, and how many more there are.
func sample(names []string) []string {
	if len(names) <= 3 {
		return names
	}
	return append(slices.Clone(names[:3]), fmt.Sprintf("%d more", len(names)-3))
}

// sharedConfigRegion is the region of the shared AWS config's profile (AWS_PROFILE, else
// default), as the SDK reads it; the environment was read before it.
func sharedConfigRegion(ctx context.Context) (region, profile string, err error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return "", "", fmt.Errorf("reading the shared AWS config for the region (or pass --aws-region), %w", err)
	}
	profile = "default"
	for _, src := range cfg.ConfigSources {
		if sc, ok := src.(config.SharedConfig); ok && sc.Profile != "" {
			profile = sc.Profile
		}
	}
	return cfg.Region, profile, nil
}

// commandRegion resolves the region of a command whose region flag is flagName, reading the
// cluster through kube (nil: not at all) with node first, and says on standard error where the
// region came from unless the flag gave it. "" means no source named one: the command says what
// to pass.
func commandRegion(cmd *cobra.Command, flagName string, kube client.Reader, node string) (string, error) {
	s := regionSources{FlagName: "--" + flagName, Getenv: os.Getenv, Profile: sharedConfigRegion, Cluster: kube, Node: node}
	if f := cmd.Flags().Lookup(flagName); f != nil && f.Changed {
		s.Flag = f.Value.String()
	}
	region, source, err := resolveRegion(cmd.Context(), s)
	if err != nil {
		return "", err
	}
	if region != "" && s.Flag == "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "Region %s (from %s)\n", region, source)
	}
	return region, nil
}
