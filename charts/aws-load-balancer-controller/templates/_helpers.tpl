{{/*
Names. They match upstream's chart so a release can be switched in place:
  name       = chart name or nameOverride
  fullname   = fullnameOverride, else the release name if it already contains `name`, else release-name
  namePrefix = nameOverride or the chart name without "-controller" (aws-load-balancer), max 42
*/}}
{{- define "albc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "albc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "albc.namePrefix" -}}
{{- default (.Chart.Name | trimSuffix "-controller") .Values.nameOverride | trunc 42 | trimSuffix "-" -}}
{{- end -}}

{{- define "albc.webhookService" -}}
{{- printf "%s-webhook-service" (include "albc.namePrefix" .) -}}
{{- end -}}

{{- define "albc.webhookConfigName" -}}
{{- printf "%s-webhook" (include "albc.namePrefix" .) -}}
{{- end -}}

{{- define "albc.tlsSecret" -}}
{{- printf "%s-tls" (include "albc.namePrefix" .) -}}
{{- end -}}

{{- define "albc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "albc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "albc.ingressClassParamsName" -}}
{{- default .Values.ingressClass .Values.ingressClassParams.name -}}
{{- end -}}

{{/* Labels: Helm's own two are dropped when `creator` names someone else. */}}
{{- define "albc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "albc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "albc.labels" -}}
{{- if eq (default "helm" .Values.creator) "helm" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ end -}}
{{ include "albc.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Where the webhook certificate comes from: "cert-manager", "values" (webhookTLS.caCert/cert/key)
or "controller" (the controller creates the Secret and patches caBundle). Fails on a half-given
certificate or when no source is left, rather than silently generating one.
*/}}
{{- define "albc.tlsMode" -}}
{{- $t := .Values.webhookTLS | default dict -}}
{{- $given := list -}}
{{- range $k := list "caCert" "cert" "key" -}}
{{- if index $t $k -}}{{- $given = append $given $k -}}{{- end -}}
{{- end -}}
{{- if .Values.enableCertManager -}}
cert-manager
{{- else if eq (len $given) 3 -}}
values
{{- else if gt (len $given) 0 -}}
{{- fail "webhookTLS.caCert, webhookTLS.cert and webhookTLS.key must be given together" -}}
{{- else if $t.managedByController -}}
controller
{{- else -}}
{{- fail "webhookTLS.managedByController is false: give webhookTLS.caCert, webhookTLS.cert and webhookTLS.key, or set enableCertManager=true" -}}
{{- end -}}
{{- end -}}

{{/* A map as k1=v1,k2=v2 in key order (Go templates range over maps sorted). */}}
{{- define "albc.mapToCsv" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $pairs = append $pairs (printf "%s=%v" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* The port of a ":8080"-style address, or the default given. */}}
{{- define "albc.metricsPort" -}}
{{- $parts := splitList ":" (default "" .Values.metricsBindAddr) -}}
{{- if gt (len $parts) 1 -}}{{- default "8080" (last $parts) -}}{{- else -}}8080{{- end -}}
{{- end -}}

{{/*
clientConfig of one webhook. Args: dict "root" $ "path" "/mutate-v1-pod".
caBundle is written only when the certificate comes from values; in the other modes someone else
(cert-manager's cainjector or the controller) owns that field, and leaving it out of the manifest
means Helm's three-way merge never resets it on upgrade.
*/}}
{{- define "albc.clientConfig" -}}
{{- $root := .root -}}
clientConfig:
  {{- if eq (include "albc.tlsMode" $root) "values" }}
  caBundle: {{ $root.Values.webhookTLS.caCert | b64enc }}
  {{- end }}
  service:
    name: {{ include "albc.webhookService" $root }}
    namespace: {{ $root.Release.Namespace }}
    path: {{ .path }}
{{- end -}}

{{/* metadata.annotations of the webhook configurations (cert-manager CA injection). */}}
{{- define "albc.webhookAnnotations" -}}
{{- if eq (include "albc.tlsMode" .) "cert-manager" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "albc.namePrefix" . }}-serving-cert
{{- end -}}
{{- end -}}

{{/*
Name of the leader-election Lease: the leaderElectionId value (upstream's default); a dryRun
shadow left on that default takes a separate one, so it never competes with the controller that
owns the cluster (as the binary does with --dry-run).
*/}}
{{- define "albc.leaderElectionId" -}}
{{- $id := .Values.leaderElectionId | default "aws-load-balancer-controller-leader" -}}
{{- if and .Values.dryRun (eq $id "aws-load-balancer-controller-leader") -}}
aws-load-balancer-controller-dry-run
{{- else -}}
{{- $id -}}
{{- end -}}
{{- end -}}
