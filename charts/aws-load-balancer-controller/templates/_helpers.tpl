{{/*
Names. They match upstream's chart so a release can be switched in place:
  name       = chart name or nameOverride
  fullname   = fullnameOverride, else the release name if it already contains `name`, else release-name
  namePrefix = nameOverride or the chart name without "-controller" (aws-load-balancer), max 42
A dryRun shadow shares its values file with the release that owns the cluster, so it adds
"-dry-run" to the full name (Deployment, ClusterRole, bindings, ...) and the ServiceAccount name:
none of its objects can be one the owner's release (upstream's or this chart) already has.
*/}}
{{- define "albc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "albc.fullname" -}}
{{- $full := "" -}}
{{- if .Values.fullnameOverride -}}
{{- $full = .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- $full = .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $full = printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- include "albc.dryRunName" (dict "root" . "name" $full) -}}
{{- end -}}

{{/* A name as given, or with dryRun "<name>-dry-run" (at most 63 characters in all). */}}
{{- define "albc.dryRunName" -}}
{{- if and .root.Values.dryRun (not (hasSuffix "-dry-run" .name)) -}}
{{- printf "%s-dry-run" (.name | trunc 55 | trimSuffix "-") -}}
{{- else -}}
{{- .name -}}
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

{{/* With dryRun "<name>-dry-run", also for a serviceAccount.name the values give (see values.yaml). */}}
{{- define "albc.serviceAccountName" -}}
{{- $sa := "" -}}
{{- if .Values.serviceAccount.create -}}
{{- $sa = default (include "albc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- $sa = default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- include "albc.dryRunName" (dict "root" . "name" $sa) -}}
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
The caBundle live in the cluster's mutating configuration (the first webhook that has one; every
webhook carries the same bundle), or nothing outside a cluster (`helm template`, first install).
*/}}
{{- define "albc.liveCaBundle" -}}
{{- $live := lookup "admissionregistration.k8s.io/v1" "MutatingWebhookConfiguration" "" (include "albc.webhookConfigName" .) -}}
{{- $found := "" -}}
{{- range $h := (($live | default dict).webhooks | default list) -}}
{{- if and (not $found) $h.clientConfig.caBundle -}}{{- $found = $h.clientConfig.caBundle -}}{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/*
clientConfig of one webhook. Args: dict "root" $ "path" "/mutate-v1-pod".
From values, caBundle is the given CA. With cert-manager its cainjector owns the field and the
manifest leaves it out. With the controller's certificate the manifest carries the bundle that is
live: Helm's three-way merge then never resets it, even on an upgrade from a release (upstream's
chart) whose manifest had a caBundle, which leaving it out would delete while old pods still serve.
*/}}
{{- define "albc.clientConfig" -}}
{{- $root := .root -}}
{{- $mode := include "albc.tlsMode" $root -}}
clientConfig:
  {{- if eq $mode "values" }}
  caBundle: {{ $root.Values.webhookTLS.caCert | b64enc }}
  {{- else if eq $mode "controller" }}
  {{- with include "albc.liveCaBundle" $root }}
  caBundle: {{ . }}
  {{- end }}
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
Name of the leader-election Lease: the leaderElectionId value (upstream's default). A dryRun
shadow never competes with the controller that owns the cluster: on that default it takes
aws-load-balancer-controller-dry-run (as the binary does with --dry-run), on another id
"<id>-dry-run".
*/}}
{{- define "albc.leaderElectionId" -}}
{{- $id := .Values.leaderElectionId | default "aws-load-balancer-controller-leader" -}}
{{- if and .Values.dryRun (eq $id "aws-load-balancer-controller-leader") -}}
aws-load-balancer-controller-dry-run
{{- else if and .Values.dryRun (not (hasSuffix "-dry-run" $id)) -}}
{{- printf "%s-dry-run" $id -}}
{{- else -}}
{{- $id -}}
{{- end -}}
{{- end -}}

{{/*
"true" when image.repository is upstream's published image: public.ecr.aws/eks/... or the EKS
regional ECR copies <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/amazon/... (any
account: the list grows with AWS regions). tests/it/chart/mod.rs `UPSTREAM_IMAGE` is the same
pattern.
*/}}
{{- define "albc.upstreamImage" -}}
{{- $repo := .Values.image.repository | default "" | toString | lower -}}
{{- if regexMatch `^(public\.ecr\.aws/eks|[0-9]{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/amazon)/aws-load-balancer-controller([:@].*)?$` $repo -}}
true
{{- end -}}
{{- end -}}

{{/*
Refuses upstream's image where it cannot work: with the controller-managed webhook certificate
(upstream's binary neither creates the Secret nor fills caBundle, so its pods never serve and the
fail-closed webhooks refuse every Service, Ingress and TargetGroupBinding) and with dryRun
(upstream's binary has no --dry-run). With webhookTLS.caCert/cert/key or cert-manager it runs.
*/}}
{{- define "albc.checkImage" -}}
{{- if include "albc.upstreamImage" . -}}
{{- $msg := "" -}}
{{- $set := "set image.repository (and image.tag) to this controller's image, built from the repository's Dockerfile" -}}
{{- if .Values.dryRun -}}
{{- $msg = printf "image.repository is upstream's image %s, which has no dry-run mode (dryRun=true): %s" .Values.image.repository $set -}}
{{- else if eq (include "albc.tlsMode" .) "controller" -}}
{{- $msg = printf "image.repository is upstream's image %s, which does not manage its webhook certificate (webhookTLS.managedByController, the default): %s, or give webhookTLS.caCert, webhookTLS.cert and webhookTLS.key, or set enableCertManager=true" .Values.image.repository $set -}}
{{- end -}}
{{- with $msg }}{{ fail . }}{{ end -}}
{{- end -}}
{{- end -}}
