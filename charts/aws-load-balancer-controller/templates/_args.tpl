{{/*
Container args: upstream's mapping from values to flags. Empty values are left out so the
controller's own default applies; booleans are passed only when they are real booleans, so an
unset key never turns into "--flag=" (which the controller would reject). toYaml quotes what
needs it (values such as awsApiThrottle carry ':' and '=').
*/}}
{{- define "albc.args" -}}
{{- $v := .Values -}}
{{- $args := list -}}
{{- $cluster := tpl (toString (default "" $v.clusterName)) . -}}
{{- $args = append $args (printf "--cluster-name=%s" (required "Chart cannot be installed without a valid clusterName!" $cluster)) -}}
{{- with $v.ingressClass }}{{ $args = append $args (printf "--ingress-class=%s" .) }}{{ end -}}
{{- $region := tpl (toString (default "" $v.region)) . -}}
{{- with $region }}{{ $args = append $args (printf "--aws-region=%s" .) }}{{ end -}}
{{- $vpc := tpl (toString (default "" $v.vpcId)) . -}}
{{- with $vpc }}{{ $args = append $args (printf "--aws-vpc-id=%s" .) }}{{ end -}}
{{- with $v.awsApiEndpoints }}{{ $args = append $args (printf "--aws-api-endpoints=%s" .) }}{{ end -}}
{{- with $v.awsApiThrottle }}{{ $args = append $args (printf "--aws-api-throttle=%s" (join "," .)) }}{{ end -}}
{{- with $v.awsMaxRetries }}{{ $args = append $args (printf "--aws-max-retries=%v" .) }}{{ end -}}
{{- range $flag, $key := dict "enable-pod-readiness-gate-inject" "enablePodReadinessGateInject" "enable-shield" "enableShield" "enable-waf" "enableWaf" "enable-wafv2" "enableWafv2" -}}
{{- $b := index $v $key -}}
{{- if kindIs "bool" $b }}{{ $args = append $args (printf "--%s=%t" $flag $b) }}{{ end -}}
{{- end -}}
{{- with $v.metricsBindAddr }}{{ $args = append $args (printf "--metrics-bind-addr=%s" .) }}{{ end -}}
{{- /* Probes on the pod IP only, where the kubelet calls them, not on every interface (with
hostNetwork that would be the node's addresses); POD_IP comes from the downward API. */ -}}
{{- $args = append $args "--health-probe-bind-addr=$(POD_IP):61779" -}}
{{- range $pair := list
  (list "ingress-max-concurrent-reconciles" $v.ingressMaxConcurrentReconciles)
  (list "service-max-concurrent-reconciles" $v.serviceMaxConcurrentReconciles)
  (list "targetgroupbinding-max-concurrent-reconciles" $v.targetgroupbindingMaxConcurrentReconciles)
  (list "targetgroupbinding-max-exponential-backoff-delay" $v.targetgroupbindingMaxExponentialBackoffDelay)
  (list "targetgroupbinding-requeue-duration" $v.targetgroupbindingRequeueDuration)
  (list "alb-gateway-max-concurrent-reconciles" $v.albGatewayMaxConcurrentReconciles)
  (list "nlb-gateway-max-concurrent-reconciles" $v.nlbGatewayMaxConcurrentReconciles)
  (list "globalaccelerator-max-concurrent-reconciles" $v.globalAcceleratorMaxConcurrentReconciles)
  (list "globalaccelerator-max-exponential-backoff-delay" $v.globalAcceleratorMaxExponentialBackoffDelay)
  (list "lb-stabilization-monitor-interval" $v.lbStabilizationMonitorInterval)
  (list "log-level" $v.logLevel)
  (list "log-format" $v.logFormat)
  (list "webhook-bind-port" $v.webhookBindPort)
  (list "sync-period" $v.syncPeriod)
  (list "watch-namespace" $v.watchNamespace)
-}}
{{- with index $pair 1 }}{{ $args = append $args (printf "--%s=%v" (index $pair 0) .) }}{{ end -}}
{{- end -}}
{{- range $flag, $key := dict "disable-ingress-class-annotation" "disableIngressClassAnnotation" "disable-ingress-group-name-annotation" "disableIngressGroupNameAnnotation" "tolerate-non-existent-backend-service" "tolerateNonExistentBackendService" "tolerate-non-existent-backend-action" "tolerateNonExistentBackendAction" -}}
{{- $b := index $v $key -}}
{{- if kindIs "bool" $b }}{{ $args = append $args (printf "--%s=%t" $flag $b) }}{{ end -}}
{{- end -}}
{{- $lease := include "albc.leaderElectionId" . -}}
{{- if ne $lease "aws-load-balancer-controller-leader" }}{{ $args = append $args (printf "--leader-election-id=%s" $lease) }}{{ end -}}
{{- with $v.defaultSSLPolicy }}{{ $args = append $args (printf "--default-ssl-policy=%s" .) }}{{ end -}}
{{- with $v.externalManagedTags }}{{ $args = append $args (printf "--external-managed-tags=%s" (join "," .)) }}{{ end -}}
{{- with $v.defaultTags }}{{ $args = append $args (printf "--default-tags=%s" (include "albc.mapToCsv" .)) }}{{ end -}}
{{- range $flag, $key := dict "enable-endpoint-slices" "enableEndpointSlices" "enable-backend-security-group" "enableBackendSecurityGroup" "enable-manage-backend-security-group-rules" "enableManageBackendSecurityGroupRules" -}}
{{- $b := index $v $key -}}
{{- if kindIs "bool" $b }}{{ $args = append $args (printf "--%s=%t" $flag $b) }}{{ end -}}
{{- end -}}
{{- with $v.backendSecurityGroup }}{{ $args = append $args (printf "--backend-security-group=%s" .) }}{{ end -}}
{{- if kindIs "bool" $v.disableRestrictedSecurityGroupRules }}{{ $args = append $args (printf "--disable-restricted-sg-rules=%t" $v.disableRestrictedSecurityGroupRules) }}{{ end -}}
{{- with ($v.controllerConfig | default dict).featureGates }}{{ $args = append $args (printf "--feature-gates=%s" (include "albc.mapToCsv" .)) }}{{ end -}}
{{- if and $v.defaultTargetType (ne (toString $v.defaultTargetType) "instance") }}{{ $args = append $args (printf "--default-target-type=%s" $v.defaultTargetType) }}{{ end -}}
{{- with $v.defaultLoadBalancerScheme }}{{ $args = append $args (printf "--default-load-balancer-scheme=%s" .) }}{{ end -}}
{{- with $v.serviceTargetENISGTags }}{{ $args = append $args (printf "--service-target-eni-security-group-tags=%s" .) }}{{ end -}}
{{- if $v.dryRun }}
{{- $args = append $args "--dry-run=true" -}}
{{- if $v.dryRunEvents }}{{ $args = append $args "--dry-run-events=true" }}{{ end -}}
{{- end -}}
{{- with ($v.certDiscovery | default dict).allowedCertificateAuthorityARNs }}{{ $args = append $args (printf "--allowed-certificate-authority-arns=%s" .) }}{{ end -}}
{{- with $v.loadBalancerClass }}{{ $args = append $args (printf "--load-balancer-class=%s" .) }}{{ end -}}
{{- with $v.vpcTags }}{{ $args = append $args (printf "--aws-vpc-tags=%s" (include "albc.mapToCsv" .)) }}{{ end -}}
{{- with $v.maxTargetsPerTargetGroup }}{{ $args = append $args (printf "--max-targets-per-target-group=%v" .) }}{{ end -}}
{{- with ($v.certManagement | default dict).defaultPCAARN }}{{ $args = append $args (printf "--default-pca-arn=%s" .) }}{{ end -}}
{{- toYaml $args -}}
{{- end -}}
