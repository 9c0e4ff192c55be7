{{/* Values of Karpenter's chart that Joiner's chart does not honour, and keys no chart knows.

Every key of the values is honoured (rendered with Joiner's equivalent meaning), or refused here
with the key and the reason: Helm passes keys a chart does not read through without a word, so a
Karpenter values file would otherwise lose settings silently. joiner.refusals returns one line per
refused value, empty when all are honoured; the Deployment fails the render with all of them.
docs/karpenter-settings.md lists every value and Joiner's answer. */}}

{{/* joiner.unknownKeys: a line for every key of .values (at .path) that is not in .known. */}}
{{- define "joiner.unknownKeys" -}}
{{- if kindIs "map" .values }}
{{- range $key, $_ := .values }}
{{- if not (has $key $.known) }}
{{ printf "- %s%s: not a value of Joiner's chart nor of Karpenter's (a typo?); the values are listed in docs/karpenter-settings.md" $.path $key }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* joiner.onlyDefault: a line when .value is set to anything but .want (compared as strings), with
.why, the reason Joiner has no other. */}}
{{- define "joiner.onlyDefault" -}}
{{- if and (not (kindIs "invalid" .value)) (ne (toString .value) (toString .want)) }}
{{ printf "- %s: %v is refused: %s; remove it or set it to %v" .path .value .why .want }}
{{- end }}
{{- end }}

{{/* joiner.logPaths: a line when the log paths at .path name anything but the container's output. */}}
{{- define "joiner.logPaths" -}}
{{- range .value }}
{{- if not (has . (list "stdout" "stderr")) }}
{{ printf "- %s: %q is refused: Joiner logs to the container's output only (kubectl logs), not to files; use stdout or stderr" $.path . }}
{{- end }}
{{- end }}
{{- end }}

{{- define "joiner.refusals" -}}
{{- $v := .Values }}
{{- include "joiner.unknownKeys" (dict "path" "" "values" $v "known" (list
  "global"
  "nameOverride" "fullnameOverride" "additionalLabels" "additionalAnnotations" "imagePullPolicy" "imagePullSecrets"
  "service" "serviceAccount" "additionalClusterRoleRules" "serviceMonitor" "replicas" "revisionHistoryLimit" "strategy"
  "podLabels" "podAnnotations" "podDisruptionBudget" "podSecurityContext" "priorityClassName" "terminationGracePeriodSeconds"
  "hostNetwork" "schedulerName" "dnsPolicy" "dnsConfig" "initContainers" "nodeSelector" "affinity" "topologySpreadConstraints"
  "tolerations" "extraVolumes" "controller" "logLevel" "logOutputPaths" "logErrorOutputPaths" "settings")) }}
{{- include "joiner.unknownKeys" (dict "path" "service." "values" $v.service "known" (list "annotations")) }}
{{- include "joiner.unknownKeys" (dict "path" "serviceAccount." "values" $v.serviceAccount "known" (list "create" "name" "annotations")) }}
{{- include "joiner.unknownKeys" (dict "path" "serviceMonitor." "values" $v.serviceMonitor "known" (list "enabled" "additionalLabels" "relabelings" "metricRelabelings" "endpointConfig" "sampleLimit")) }}
{{- include "joiner.unknownKeys" (dict "path" "podDisruptionBudget." "values" $v.podDisruptionBudget "known" (list "name" "maxUnavailable")) }}
{{- include "joiner.unknownKeys" (dict "path" "controller." "values" $v.controller "known" (list
  "containerName" "image" "env" "envFrom" "securityContext" "resources" "extraVolumeMounts" "sidecarContainer" "sidecarVolumeMounts" "metrics" "healthProbe")) }}
{{- with $v.controller }}
{{- include "joiner.unknownKeys" (dict "path" "controller.image." "values" .image "known" (list "repository" "tag" "digest" "pullPolicy")) }}
{{- include "joiner.unknownKeys" (dict "path" "controller.metrics." "values" .metrics "known" (list "port")) }}
{{- include "joiner.unknownKeys" (dict "path" "controller.healthProbe." "values" .healthProbe "known" (list "port")) }}
{{- if and .image (hasPrefix "public.ecr.aws/karpenter/" (toString .image.repository)) }}
{{ printf "- controller.image.repository: %s is refused: it is Karpenter's image, so this chart would run Karpenter, not Joiner; remove controller.image to run the chart's own" .image.repository }}
{{- end }}
{{- end }}
{{- with $v.controller }}
{{- /* Karpenter's environment variables Joiner does not read, each with Joiner's answer: set
through controller.env they would be dropped without a word. */}}
{{- $karpenterEnv := dict
  "METRICS_PORT" "Joiner reads METRICS_BIND_ADDRESS; set controller.metrics.port"
  "HEALTH_PROBE_PORT" "Joiner reads HEALTH_PROBE_BIND_ADDRESS; set controller.healthProbe.port"
  "DISABLE_LEADER_ELECTION" "Joiner reads LEADER_ELECT (true or false)"
  "LEADER_ELECTION_NAME" "Joiner reads LEADER_ELECTION_ID"
  "MEMORY_LIMIT" "the chart sets GOMEMLIMIT from controller.resources.limits.memory"
  "CPU_REQUESTS" "Joiner does not size itself by its CPU request"
  "KARPENTER_SERVICE" "Joiner serves no webhook"
  "DISABLE_CONTROLLER_WARMUP" "Joiner has no controller warm-up setting"
  "LOG_OUTPUT_PATHS" "Joiner logs to the container's output only"
  "LOG_ERROR_OUTPUT_PATHS" "Joiner logs to the container's output only"
  "AWS_FEATURE_GATES" "Joiner's EC2NodeClass CRD carries its validation rules whatever the gate (docs/feature-gates.md)"
  "ISOLATED_VPC" "see settings.isolatedVPC"
  "EKS_CONTROL_PLANE" "see settings.eksControlPlane"
  "VM_MEMORY_OVERHEAD_PERCENT" "see settings.vmMemoryOverheadPercent"
  "RESERVED_ENIS" "see settings.reservedENIs"
  "ENABLE_ZONAL_SHIFT" "see settings.enableZonalShift"
  "IGNORE_DRA_REQUESTS" "see settings.ignoreDRARequests"
  "DISABLE_CLUSTER_STATE_OBSERVABILITY" "see settings.disableClusterStateObservability"
  "DISABLE_DRY_RUN" "see settings.disableDryRun"
  "AMI_REFRESH_INTERVAL" "see settings.amiRefreshInterval"
  "SUBNET_REFRESH_INTERVAL" "see settings.subnetRefreshInterval" }}
{{- range .env }}
{{- if and (kindIs "map" .) (hasKey $karpenterEnv (toString .name)) }}
{{ printf "- controller.env %s: Karpenter's environment variable, which Joiner does not read: %s" .name (get $karpenterEnv (toString .name)) }}
{{- end }}
{{- end }}
{{- end }}
{{- include "joiner.logPaths" (dict "path" "logOutputPaths" "value" $v.logOutputPaths) }}
{{- include "joiner.logPaths" (dict "path" "logErrorOutputPaths" "value" $v.logErrorOutputPaths) }}
{{- with $v.settings }}
{{- include "joiner.unknownKeys" (dict "path" "settings." "values" . "known" (list
  "clusterName" "clusterEndpoint" "clusterCABundle" "region" "interruptionQueue" "featureGates" "awsFeatureGates"
  "batchIdleDuration" "batchMaxDuration" "minValuesPolicy" "preferencePolicy" "schedulerConfig" "awsRateLimitScale"
  "isolatedVPC" "eksControlPlane" "vmMemoryOverheadPercent" "enableZonalShift" "reservedENIs" "ignoreDRARequests"
  "disableClusterStateObservability" "disableDryRun" "amiRefreshInterval" "subnetRefreshInterval")) }}
{{- include "joiner.unknownKeys" (dict "path" "settings.awsFeatureGates." "values" .awsFeatureGates "known" (list "nodeClassCEL")) }}
{{- /* Feature gates: the controller refuses the same at start (pkg/operator/featuregates.go,
whose table these reasons follow; TestKarpenterFeatureGates keeps the two in step), but a
refusal here stops helm install before a pod crash-loops. */}}
{{- $missing := dict
  "nodeRepair" "Joiner reports nodes with unhealthy conditions but does not repair them"
  "reservedCapacity" "Joiner does not launch into capacity reservations, which is Karpenter with the gate off (Karpenter's chart turns it on by default)"
  "nodeOverlay" "Joiner has no NodeOverlay API"
  "staticCapacity" "Joiner's NodePools have no spec.replicas"
  "capacityBuffer" "Joiner has no CapacityBuffer support" }}
{{- range $name, $on := .featureGates }}
{{- if not (or (hasKey $missing $name) (eq $name "spotToSpotConsolidation")) }}
{{ printf "- settings.featureGates.%s: not one of Karpenter's feature gates (spotToSpotConsolidation, %s); see docs/feature-gates.md" $name (keys $missing | sortAlpha | join ", ") }}
{{- else if not (has (toString $on) (list "true" "false")) }}
{{ printf "- settings.featureGates.%s: %v is refused: a feature gate is true or false" $name $on }}
{{- else if and (eq (toString $on) "true") (hasKey $missing $name) }}
{{ printf "- settings.featureGates.%s: true is refused: %s; set it to false (docs/feature-gates.md)" $name (get $missing $name) }}
{{- end }}
{{- end }}
{{- include "joiner.onlyDefault" (dict "path" "settings.isolatedVPC" "value" .isolatedVPC "want" false
  "why" "Joiner has no isolated-VPC mode: it keeps calling the AWS Price List API, which has no VPC endpoint, and uses its built-in price estimates only when those calls fail") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.enableZonalShift" "value" .enableZonalShift "want" false
  "why" "Joiner does not read EKS zonal shifts, so it would keep launching into a zone shifted away") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.reservedENIs" "value" .reservedENIs "want" 0
  "why" "Joiner's max-pods and kube-reserved count every network interface of the instance type, and it has no setting to reserve some") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.ignoreDRARequests" "value" .ignoreDRARequests "want" true
  "why" "Joiner's scheduling simulation does not model Dynamic Resource Allocation: it always ignores pods' resource claims") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.disableClusterStateObservability" "value" .disableClusterStateObservability "want" false
  "why" "Joiner always serves its cluster state metrics and events, with no switch") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.disableDryRun" "value" .disableDryRun "want" false
  "why" "Joiner always validates an EC2NodeClass with dry-run EC2 calls (its Ready condition reports the result), with no switch") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.amiRefreshInterval" "value" .amiRefreshInterval "want" "1m"
  "why" "Joiner re-resolves every EC2NodeClass's AMIs at least once a minute (every 15 s while it is not Ready), with no setting") }}
{{- include "joiner.onlyDefault" (dict "path" "settings.subnetRefreshInterval" "value" .subnetRefreshInterval "want" "1m"
  "why" "Joiner re-resolves every EC2NodeClass's subnets at least once a minute (every 15 s while it is not Ready), with no setting") }}
{{- end }}
{{- end }}
