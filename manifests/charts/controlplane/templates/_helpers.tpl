{{/*
fullname is the name of the release's objects: the release name, with the
chart name appended unless the release name already holds it.
*/}}
{{- define "controlplane.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* selectorLabels pick the release's pods; they never change. */}}
{{- define "controlplane.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* labels go on every object of the release. */}}
{{- define "controlplane.labels" -}}
{{ include "controlplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: control-plane
app.kubernetes.io/part-of: meshcp
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* serviceAccountName is the ServiceAccount the pods run as. */}}
{{- define "controlplane.serviceAccountName" -}}
{{- default (include "controlplane.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* image is the daemon's image reference, pinned by digest when given. */}}
{{- define "controlplane.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* leaseName is the Lease the replicas elect their status writer with. */}}
{{- define "controlplane.leaseName" -}}
{{- printf "%s-leader" (include "controlplane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
