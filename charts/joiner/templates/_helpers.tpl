{{/* The chart name. */}}
{{- define "joiner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of resources: the release name, with the chart name unless it holds it. */}}
{{- define "joiner.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels every resource carries. */}}
{{- define "joiner.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "joiner.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select the controller's pods. */}}
{{- define "joiner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "joiner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount's name. */}}
{{- define "joiner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "joiner.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The controller image: repository@digest, else repository:tag (tag defaults to appVersion). */}}
{{- define "joiner.image" -}}
{{- if .Values.controller.image.digest }}
{{- printf "%s@%s" .Values.controller.image.repository .Values.controller.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.controller.image.repository (default .Chart.AppVersion .Values.controller.image.tag) }}
{{- end }}
{{- end }}

{{/* The leader-election Lease's name. */}}
{{- define "joiner.leaseName" -}}
joiner-leader-election
{{- end }}

{{/* settings.featureGates as Karpenter's FEATURE_GATES: every key, its first letter upper-cased,
with its value (spotToSpotConsolidation: true is SpotToSpotConsolidation=true), in key order.
Nothing is dropped: the controller refuses a name that is not a gate, and true for a gate Joiner
does not implement, saying why. */}}
{{- define "joiner.featureGates" -}}
{{- $pairs := list }}
{{- range $name, $on := . }}
{{- $pairs = append $pairs (printf "%s%s=%v" (upper (substr 0 1 $name)) (substr 1 -1 $name) $on) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* The controller container's name (Karpenter's controller.containerName). */}}
{{- define "joiner.containerName" -}}
{{- .Values.controller.containerName | default "controller" }}
{{- end }}
