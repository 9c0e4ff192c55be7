package awsemu_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

func TestEKSAccessEntries(t *testing.T) {
	e := newEnv(t)
	client := eks.NewFromConfig(e.config(t, e.region, "AKIDJOINERCONTROLLER"))
	ctx := t.Context()
	cluster, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if *cluster.Cluster.Version != "1.33" || cluster.Cluster.AccessConfig.AuthenticationMode != "API_AND_CONFIG_MAP" || *cluster.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr != "10.100.0.0/16" {
		t.Errorf("cluster: %+v", cluster.Cluster)
	}
	_, err = client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod")})
	wantCode(t, err, "ResourceNotFoundException", "unknown cluster")

	nodeRole := "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	list, err := client.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.AccessEntries) != 1 || list.AccessEntries[0] != nodeRole {
		t.Errorf("entries: %v", list.AccessEntries)
	}
	entry, err := client.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(nodeRole)})
	if err != nil {
		t.Fatal(err)
	}
	if *entry.AccessEntry.Type != "EC2_LINUX" || *entry.AccessEntry.Username != "system:node:{{EC2PrivateDNSName}}" {
		t.Errorf("entry: %+v", entry.AccessEntry)
	}
	other := "arn:aws:iam::111122223333:role/OtherNodeRole"
	// EKS refuses an entry for a role that does not exist: the administrator creates it first.
	_, err = e.admin(t, e.region).iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("OtherNodeRole"),
		AssumeRolePolicyDocument: aws.String(`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(other),
		Type: aws.String("EC2_LINUX"), KubernetesGroups: []string{"system:masters"}})
	wantCode(t, err, "InvalidParameterException", "groups on an EC2_LINUX entry")
	if _, err := client.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(other), Type: aws.String("EC2_LINUX")}); err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(other), Type: aws.String("EC2_LINUX")})
	wantCode(t, err, "ResourceInUseException", "duplicate entry")
	var all []string
	p := eks.NewListAccessEntriesPaginator(client, &eks.ListAccessEntriesInput{ClusterName: aws.String("demo"), MaxResults: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.AccessEntries...)
	}
	if len(all) != 2 {
		t.Errorf("paginated entries: %v", all)
	}
	_, err = client.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String("arn:aws:iam::111122223333:role/Nobody")})
	wantCode(t, err, "ResourceNotFoundException", "unknown principal")
}
