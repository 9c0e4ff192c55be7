package ec2

import "encoding/xml"

// Response elements. Only fields the emulator fills are declared; names follow EC2's wire format.

type tagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type instanceTypeXML struct {
	InstanceType                  string       `xml:"instanceType"`
	CurrentGeneration             bool         `xml:"currentGeneration"`
	FreeTierEligible              bool         `xml:"freeTierEligible"`
	SupportedUsageClasses         []string     `xml:"supportedUsageClasses>item"`
	SupportedRootDeviceTypes      []string     `xml:"supportedRootDeviceTypes>item"`
	SupportedVirtualizationTypes  []string     `xml:"supportedVirtualizationTypes>item"`
	BareMetal                     bool         `xml:"bareMetal"`
	Hypervisor                    string       `xml:"hypervisor,omitempty"`
	ProcessorInfo                 processorXML `xml:"processorInfo"`
	VCPUInfo                      vcpuXML      `xml:"vCpuInfo"`
	MemoryInfo                    memoryXML    `xml:"memoryInfo"`
	InstanceStorageSupported      bool         `xml:"instanceStorageSupported"`
	InstanceStorageInfo           *storageXML  `xml:"instanceStorageInfo"`
	EBSInfo                       ebsXML       `xml:"ebsInfo"`
	NetworkInfo                   networkXML   `xml:"networkInfo"`
	GPUInfo                       *gpuInfoXML  `xml:"gpuInfo"`
	HibernationSupported          bool         `xml:"hibernationSupported"`
	BurstablePerformanceSupported bool         `xml:"burstablePerformanceSupported"`
	DedicatedHostsSupported       bool         `xml:"dedicatedHostsSupported"`
	AutoRecoverySupported         bool         `xml:"autoRecoverySupported"`
	SupportedBootModes            []string     `xml:"supportedBootModes>item"`
}

type processorXML struct {
	SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	ClockGHz               float64  `xml:"sustainedClockSpeedInGhz,omitempty"`
	Manufacturer           string   `xml:"manufacturer"`
}

type vcpuXML struct {
	DefaultVCPUs          int32 `xml:"defaultVCpus"`
	DefaultCores          int32 `xml:"defaultCores"`
	DefaultThreadsPerCore int32 `xml:"defaultThreadsPerCore"`
}

type memoryXML struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type storageXML struct {
	TotalSizeInGB int64     `xml:"totalSizeInGB"`
	Disks         []diskXML `xml:"disks>item"`
	NVMeSupport   string    `xml:"nvmeSupport"`
}

type diskXML struct {
	SizeInGB int64  `xml:"sizeInGB"`
	Count    int32  `xml:"count"`
	Type     string `xml:"type"`
}

type ebsXML struct {
	EBSOptimizedSupport string `xml:"ebsOptimizedSupport"`
	EncryptionSupport   string `xml:"encryptionSupport"`
	NVMeSupport         string `xml:"nvmeSupport"`
}

type networkXML struct {
	NetworkPerformance         string           `xml:"networkPerformance"`
	MaximumNetworkInterfaces   int32            `xml:"maximumNetworkInterfaces"`
	MaximumNetworkCards        int32            `xml:"maximumNetworkCards"`
	DefaultNetworkCardIndex    int32            `xml:"defaultNetworkCardIndex"`
	NetworkCards               []networkCardXML `xml:"networkCards>item"`
	IPv4AddressesPerInterface  int32            `xml:"ipv4AddressesPerInterface"`
	IPv6AddressesPerInterface  int32            `xml:"ipv6AddressesPerInterface"`
	IPv6Supported              bool             `xml:"ipv6Supported"`
	ENASupport                 string           `xml:"enaSupport"`
	EFASupported               bool             `xml:"efaSupported"`
	EFAInfo                    *efaXML          `xml:"efaInfo"`
	EncryptionInTransitSupport bool             `xml:"encryptionInTransitSupported"`
}

type networkCardXML struct {
	NetworkCardIndex         int32  `xml:"networkCardIndex"`
	NetworkPerformance       string `xml:"networkPerformance"`
	MaximumNetworkInterfaces int32  `xml:"maximumNetworkInterfaces"`
}

type efaXML struct {
	MaximumEFAInterfaces int32 `xml:"maximumEfaInterfaces"`
}

type gpuInfoXML struct {
	GPUs                []gpuXML `xml:"gpus>item"`
	TotalGPUMemoryInMiB int64    `xml:"totalGpuMemoryInMiB"`
}

type gpuXML struct {
	Name         string    `xml:"name"`
	Manufacturer string    `xml:"manufacturer"`
	Count        int32     `xml:"count"`
	MemoryInfo   memoryXML `xml:"memoryInfo"`
}

type describeInstanceTypesResponse struct {
	XMLName       xml.Name          `xml:"DescribeInstanceTypesResponse"`
	XMLNS         string            `xml:"xmlns,attr"`
	RequestID     string            `xml:"requestId"`
	InstanceTypes []instanceTypeXML `xml:"instanceTypeSet>item"`
	NextToken     string            `xml:"nextToken,omitempty"`
}

type offeringXML struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

type describeInstanceTypeOfferingsResponse struct {
	XMLName   xml.Name      `xml:"DescribeInstanceTypeOfferingsResponse"`
	XMLNS     string        `xml:"xmlns,attr"`
	RequestID string        `xml:"requestId"`
	Offerings []offeringXML `xml:"instanceTypeOfferingSet>item"`
	NextToken string        `xml:"nextToken,omitempty"`
}

type zoneXML struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
}

type describeAvailabilityZonesResponse struct {
	XMLName   xml.Name  `xml:"DescribeAvailabilityZonesResponse"`
	XMLNS     string    `xml:"xmlns,attr"`
	RequestID string    `xml:"requestId"`
	Zones     []zoneXML `xml:"availabilityZoneInfo>item"`
}

type subnetXML struct {
	SubnetID            string   `xml:"subnetId"`
	SubnetARN           string   `xml:"subnetArn"`
	State               string   `xml:"state"`
	VPCID               string   `xml:"vpcId"`
	OwnerID             string   `xml:"ownerId"`
	CIDRBlock           string   `xml:"cidrBlock"`
	AvailableIPCount    int32    `xml:"availableIpAddressCount"`
	AvailabilityZone    string   `xml:"availabilityZone"`
	AvailabilityZoneID  string   `xml:"availabilityZoneId"`
	DefaultForAZ        bool     `xml:"defaultForAz"`
	MapPublicIPOnLaunch bool     `xml:"mapPublicIpOnLaunch"`
	Tags                []tagXML `xml:"tagSet>item"`
}

type describeSubnetsResponse struct {
	XMLName   xml.Name    `xml:"DescribeSubnetsResponse"`
	XMLNS     string      `xml:"xmlns,attr"`
	RequestID string      `xml:"requestId"`
	Subnets   []subnetXML `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

type securityGroupXML struct {
	GroupID          string   `xml:"groupId"`
	GroupName        string   `xml:"groupName"`
	GroupDescription string   `xml:"groupDescription"`
	VPCID            string   `xml:"vpcId"`
	OwnerID          string   `xml:"ownerId"`
	ARN              string   `xml:"securityGroupArn"`
	Tags             []tagXML `xml:"tagSet>item"`
}

type describeSecurityGroupsResponse struct {
	XMLName        xml.Name           `xml:"DescribeSecurityGroupsResponse"`
	XMLNS          string             `xml:"xmlns,attr"`
	RequestID      string             `xml:"requestId"`
	SecurityGroups []securityGroupXML `xml:"securityGroupInfo>item"`
	NextToken      string             `xml:"nextToken,omitempty"`
}

type imageXML struct {
	ImageID            string   `xml:"imageId"`
	ImageLocation      string   `xml:"imageLocation"`
	ImageState         string   `xml:"imageState"`
	ImageOwnerID       string   `xml:"imageOwnerId"`
	ImageOwnerAlias    string   `xml:"imageOwnerAlias,omitempty"`
	CreationDate       string   `xml:"creationDate"`
	DeprecationTime    string   `xml:"deprecationTime,omitempty"`
	IsPublic           bool     `xml:"isPublic"`
	Architecture       string   `xml:"architecture"`
	ImageType          string   `xml:"imageType"`
	Name               string   `xml:"name"`
	Description        string   `xml:"description"`
	RootDeviceType     string   `xml:"rootDeviceType"`
	RootDeviceName     string   `xml:"rootDeviceName"`
	VirtualizationType string   `xml:"virtualizationType"`
	PlatformDetails    string   `xml:"platformDetails,omitempty"`
	Hypervisor         string   `xml:"hypervisor"`
	ENASupport         bool     `xml:"enaSupport"`
	Tags               []tagXML `xml:"tagSet>item"`
}

type describeImagesResponse struct {
	XMLName   xml.Name   `xml:"DescribeImagesResponse"`
	XMLNS     string     `xml:"xmlns,attr"`
	RequestID string     `xml:"requestId"`
	Images    []imageXML `xml:"imagesSet>item"`
	NextToken string     `xml:"nextToken,omitempty"`
}

type spotPriceXML struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
}

type describeSpotPriceHistoryResponse struct {
	XMLName   xml.Name       `xml:"DescribeSpotPriceHistoryResponse"`
	XMLNS     string         `xml:"xmlns,attr"`
	RequestID string         `xml:"requestId"`
	Prices    []spotPriceXML `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken"`
}

type launchTemplateXML struct {
	LaunchTemplateID     string   `xml:"launchTemplateId"`
	LaunchTemplateName   string   `xml:"launchTemplateName"`
	CreateTime           string   `xml:"createTime"`
	CreatedBy            string   `xml:"createdBy"`
	DefaultVersionNumber int64    `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64    `xml:"latestVersionNumber"`
	Tags                 []tagXML `xml:"tagSet>item"`
}

type createLaunchTemplateResponse struct {
	XMLName        xml.Name          `xml:"CreateLaunchTemplateResponse"`
	XMLNS          string            `xml:"xmlns,attr"`
	RequestID      string            `xml:"requestId"`
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

type describeLaunchTemplatesResponse struct {
	XMLName         xml.Name            `xml:"DescribeLaunchTemplatesResponse"`
	XMLNS           string              `xml:"xmlns,attr"`
	RequestID       string              `xml:"requestId"`
	LaunchTemplates []launchTemplateXML `xml:"launchTemplates>item"`
	NextToken       string              `xml:"nextToken,omitempty"`
}

type deregisterImageResponse struct {
	XMLName   xml.Name `xml:"DeregisterImageResponse"`
	XMLNS     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Return    bool     `xml:"return"`
}

type deleteLaunchTemplateResponse struct {
	XMLName        xml.Name          `xml:"DeleteLaunchTemplateResponse"`
	XMLNS          string            `xml:"xmlns,attr"`
	RequestID      string            `xml:"requestId"`
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

type fleetLTSpecXML struct {
	LaunchTemplateID   string `xml:"launchTemplateId,omitempty"`
	LaunchTemplateName string `xml:"launchTemplateName,omitempty"`
	Version            string `xml:"version,omitempty"`
}

type fleetOverridesXML struct {
	InstanceType     string `xml:"instanceType,omitempty"`
	SubnetID         string `xml:"subnetId,omitempty"`
	AvailabilityZone string `xml:"availabilityZone,omitempty"`
	ImageID          string `xml:"imageId,omitempty"`
	Priority         string `xml:"priority,omitempty"`
}

type ltAndOverridesXML struct {
	Spec      fleetLTSpecXML    `xml:"launchTemplateSpecification"`
	Overrides fleetOverridesXML `xml:"overrides"`
}

type fleetErrorXML struct {
	LaunchTemplateAndOverrides ltAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string            `xml:"lifecycle"`
	ErrorCode                  string            `xml:"errorCode"`
	ErrorMessage               string            `xml:"errorMessage"`
}

type fleetInstanceXML struct {
	LaunchTemplateAndOverrides ltAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string            `xml:"lifecycle"`
	InstanceIDs                []string          `xml:"instanceIds>item"`
	InstanceType               string            `xml:"instanceType"`
	Platform                   string            `xml:"platform,omitempty"`
}

type createFleetResponse struct {
	XMLName   xml.Name           `xml:"CreateFleetResponse"`
	XMLNS     string             `xml:"xmlns,attr"`
	RequestID string             `xml:"requestId"`
	FleetID   string             `xml:"fleetId"`
	Errors    []fleetErrorXML    `xml:"errorSet>item"`
	Instances []fleetInstanceXML `xml:"fleetInstanceSet>item"`
}

type stateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type placementXML struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId,omitempty"`
	Tenancy            string `xml:"tenancy"`
}

type groupXML struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName,omitempty"`
}

type profileXML struct {
	ARN string `xml:"arn"`
	ID  string `xml:"id"`
}

type stateReasonXML struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

type instanceXML struct {
	InstanceID         string          `xml:"instanceId"`
	ImageID            string          `xml:"imageId"`
	State              stateXML        `xml:"instanceState"`
	PrivateDNSName     string          `xml:"privateDnsName"`
	DNSName            string          `xml:"dnsName"`
	Reason             string          `xml:"reason"`
	AMILaunchIndex     int             `xml:"amiLaunchIndex"`
	InstanceType       string          `xml:"instanceType"`
	LaunchTime         string          `xml:"launchTime"`
	Placement          placementXML    `xml:"placement"`
	SubnetID           string          `xml:"subnetId"`
	VPCID              string          `xml:"vpcId"`
	PrivateIPAddress   string          `xml:"privateIpAddress"`
	Groups             []groupXML      `xml:"groupSet>item"`
	Architecture       string          `xml:"architecture"`
	RootDeviceType     string          `xml:"rootDeviceType"`
	RootDeviceName     string          `xml:"rootDeviceName"`
	InstanceLifecycle  string          `xml:"instanceLifecycle,omitempty"`
	VirtualizationType string          `xml:"virtualizationType"`
	Hypervisor         string          `xml:"hypervisor"`
	IAMInstanceProfile *profileXML     `xml:"iamInstanceProfile"`
	StateReason        *stateReasonXML `xml:"stateReason"`
	Tags               []tagXML        `xml:"tagSet>item"`
}

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []groupXML    `xml:"groupSet>item"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type describeInstancesResponse struct {
	XMLName      xml.Name         `xml:"DescribeInstancesResponse"`
	XMLNS        string           `xml:"xmlns,attr"`
	RequestID    string           `xml:"requestId"`
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

type runInstancesResponse struct {
	XMLName       xml.Name      `xml:"RunInstancesResponse"`
	XMLNS         string        `xml:"xmlns,attr"`
	RequestID     string        `xml:"requestId"`
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []groupXML    `xml:"groupSet>item"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type stateChangeXML struct {
	InstanceID    string   `xml:"instanceId"`
	CurrentState  stateXML `xml:"currentState"`
	PreviousState stateXML `xml:"previousState"`
}

type terminateInstancesResponse struct {
	XMLName   xml.Name         `xml:"TerminateInstancesResponse"`
	XMLNS     string           `xml:"xmlns,attr"`
	RequestID string           `xml:"requestId"`
	Instances []stateChangeXML `xml:"instancesSet>item"`
}

type createTagsResponse struct {
	XMLName   xml.Name `xml:"CreateTagsResponse"`
	XMLNS     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Return    bool     `xml:"return"`
}

type getConsoleOutputResponse struct {
	XMLName    xml.Name `xml:"GetConsoleOutputResponse"`
	XMLNS      string   `xml:"xmlns,attr"`
	RequestID  string   `xml:"requestId"`
	InstanceID string   `xml:"instanceId"`
	Timestamp  string   `xml:"timestamp"`
	Output     string   `xml:"output"`
}

type statusSummaryXML struct {
	Status string `xml:"status"`
}

type instanceStatusXML struct {
	InstanceID       string           `xml:"instanceId"`
	AvailabilityZone string           `xml:"availabilityZone"`
	InstanceState    stateXML         `xml:"instanceState"`
	InstanceStatus   statusSummaryXML `xml:"instanceStatus"`
	SystemStatus     statusSummaryXML `xml:"systemStatus"`
}

type describeInstanceStatusResponse struct {
	XMLName   xml.Name            `xml:"DescribeInstanceStatusResponse"`
	XMLNS     string              `xml:"xmlns,attr"`
	RequestID string              `xml:"requestId"`
	Statuses  []instanceStatusXML `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

type capacityReservationXML struct {
	CapacityReservationID string `xml:"capacityReservationId"`
}

type describeCapacityReservationsResponse struct {
	XMLName      xml.Name                 `xml:"DescribeCapacityReservationsResponse"`
	XMLNS        string                   `xml:"xmlns,attr"`
	RequestID    string                   `xml:"requestId"`
	Reservations []capacityReservationXML `xml:"capacityReservationSet>item"`
	NextToken    string                   `xml:"nextToken,omitempty"`
}
