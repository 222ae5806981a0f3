"""The Table columns kube-apiserver 1.24 prints for each built-in resource (`pkg/printers/internalversion`).

Generated from the recorded Tables in tests/testing/data/surface-1.24.json (names, types, formats,
priorities and the descriptions the API documents each column with); `tables.py` makes the cells.
"""

from __future__ import annotations

# the column descriptions, each once
D0 = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names"
D1 = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."
D2 = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
D3 = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service."
D4 = "The time at which the most recent occurrence of this event was recorded."
D5 = "Type of this event (Normal, Warning), new types could be added in the future"
D6 = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
D7 = "The object that this event is about."
D8 = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object."
D9 = "The component reporting this event. Should be a short machine understandable string."
D10 = "A human-readable description of the status of this operation."
D11 = "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"
D12 = "The number of times this event has occurred."
D13 = "The status of the namespace"
D14 = "The status of the node"
D15 = "The roles of the node"
D16 = "Kubelet Version reported by the node."
D17 = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See http://pr.k8s.io/79391 for an example."
D18 = "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."
D19 = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."
D20 = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."
D21 = "phase represents the current phase of PersistentVolumeClaim."
D22 = "volumeName is the binding reference to the PersistentVolume backing this claim."
D23 = "capacity represents the actual resources of the underlying volume."
D24 = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"
D25 = "StorageClass of the pvc"
D26 = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."
D27 = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"
D28 = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"
D29 = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"
D30 = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"
D31 = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"
D32 = "StorageClass of the pv"
D33 = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."
D34 = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec."
D35 = "The aggregate readiness state of this pod for accepting traffic."
D36 = "The aggregate status of the containers in this pod."
D37 = "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."
D38 = "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."
D39 = "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements."
D40 = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled."
D41 = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"
D42 = "Names of each container in the template."
D43 = "Images referenced by each container in the template."
D44 = "The labels for the pod template."
D45 = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
D46 = "Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
D47 = "The number of ready replicas for this replication controller."
D48 = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D49 = "Request represents a minimum amount of cpu/memory that a container may consume."
D50 = "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
D51 = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"
D52 = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"
D53 = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret"
D54 = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types"
D55 = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
D56 = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system."
D57 = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
D58 = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/"
D59 = "Controller of the object"
D60 = "Revision indicates the revision of the state represented by Data."
D61 = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
D62 = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
D63 = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."
D64 = "The total number of nodes that are running updated daemon pod"
D65 = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"
D66 = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"
D67 = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D68 = "Number of the pod with ready state"
D69 = "Total number of non-terminated pods targeted by this deployment that have the desired template spec."
D70 = "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."
D71 = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."
D72 = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller"
D73 = "Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller"
D74 = "The number of ready replicas for this replica set."
D75 = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D76 = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."
D77 = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond."
D78 = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."
D79 = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."
D80 = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."
D81 = "The number of pods which reached phase Succeeded."
D82 = "Time required to complete the job."
D83 = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D84 = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
D85 = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."
D86 = "A list of pointers to currently running jobs."
D87 = "Information when was the last time the job was successfully scheduled."
D88 = "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`."
D89 = "Base64-encoded PKCS#10 CSR data"
D90 = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes."
D91 = "Conditions applied to the request, such as approval or denial."
D92 = "Controller that is responsible for handling this class"
D93 = "A reference to a resource with additional parameters"
D94 = "The name of the IngressClass resource that should be used for additional configuration"
D95 = "Hosts that incoming requests are matched against before the ingress rule"
D96 = "Address is a list containing ingress points for the load-balancer"
D97 = "Ports of TLS configurations that open"
D98 = "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace."
D99 = "The minimum number of pods that must be available."
D100 = "The maximum number of pods that may be unavailable."
D101 = "Calculated number of pods that may be disrupted at this time."
D102 = "privileged determines if a pod can request to be run as privileged."
D103 = "allowedCapabilities is a list of capabilities that can be requested to add to the container. Capabilities in this field may be added at the pod author's discretion. You must not list a capability in both allowedCapabilities and requiredDropCapabilities."
D104 = "seLinux is the strategy that will dictate the allowable labels that may be set."
D105 = "runAsUser is the strategy that will dictate the allowable RunAsUser values that may be set."
D106 = "fsGroup is the strategy that will dictate what fs group is used by the SecurityContext."
D107 = "supplementalGroups is the strategy that will dictate what supplemental groups are used by the SecurityContext."
D108 = "readOnlyRootFilesystem when set to true will force containers to run with a read only root file system.  If the container specifically requests to run with a non-read only root file system the PSP should deny the pod. If set to false the container may run with a read only root file system if it wishes but it will not be forced to."
D109 = "volumes is an allowlist of volume plugins. Empty indicates that no volumes may be used. To allow all volumes you may use '*'."
D110 = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
D111 = "Users in the clusterRoleBinding"
D112 = "Groups in the clusterRoleBinding"
D113 = "ServiceAccounts in the clusterRoleBinding"
D114 = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
D115 = "Users in the roleBinding"
D116 = "Groups in the roleBinding"
D117 = "ServiceAccounts in the roleBinding"
D118 = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."
D119 = "If set to true, podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations. If set to false, pod information will not be passed on mount. Default is false. The CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext. The following VolumeConext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field is immutable."
D120 = "If set to true, storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."
D121 = "TokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically."
D122 = "RequiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."
D123 = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism. The other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume. For more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future. This field is beta.\n\nThis field is immutable."
D124 = "Drivers indicates the number of CSI drivers registered on the node"
D125 = "Provisioner indicates the type of the provisioner."
D126 = "Dynamically provisioned PersistentVolumes of this storage class are created with this reclaimPolicy. Defaults to Delete."
D127 = "VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature."
D128 = "AllowVolumeExpansion shows whether the storage class allow volume expand"
D129 = "Attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName()."
D130 = "Name of the persistent volume to attach."
D131 = "The node that the volume should be attached to."
D132 = "Indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."
D133 = "Webhooks indicates the number of webhooks registered in this configuration"
D134 = "The reference to the service that hosts this API endpoint."
D135 = "Whether this service is available."
D136 = "The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."
D137 = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."
D138 = "holderIdentity contains the identity of the holder of a current lease."
D139 = ""
D140 = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name."
D141 = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports."
D142 = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints."
D143 = "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required."
D144 = "`assuredConcurrencyShares` (ACS) configures the execution limit, which is a limit on the number of requests of this priority level that may be exeucting at a given time.  ACS must be a positive number. The server's concurrency limit (SCL) is divided among the concurrency-controlled priority levels in proportion to their assured concurrency shares. This produces the assured concurrency value (ACV) "
D145 = "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64."
D146 = "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8."
D147 = "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50."
D148 = "`name` is the name of the priority level configuration being referenced Required."
D149 = "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default."
D150 = "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string."
D151 = "references a broken or non-existent PriorityLevelConfiguration"
D152 = "Status of the component conditions"
D153 = "Message of the component conditions"
D154 = "Error of the component conditions"

#: (group, resource) -> [(name, type, format, description, priority)]
COLUMNS: dict[tuple[str, str], list[tuple[str, str, str, str, int]]] = {
    ("", "componentstatuses"): [
        ("Name", "string", "name", D0, 0),
        ("Status", "string", "", D152, 0),
        ("Message", "string", "", D153, 0),
        ("Error", "string", "", D154, 0),
    ],
    ("", "configmaps"): [
        ("Name", "string", "name", D0, 0),
        ("Data", "string", "", D1, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("", "endpoints"): [
        ("Name", "string", "name", D0, 0),
        ("Endpoints", "string", "", D3, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("", "events"): [
        ("Last Seen", "string", "", D4, 0),
        ("Type", "string", "", D5, 0),
        ("Reason", "string", "", D6, 0),
        ("Object", "string", "", D7, 0),
        ("Subobject", "string", "", D8, 1),
        ("Source", "string", "", D9, 1),
        ("Message", "string", "", D10, 0),
        ("First Seen", "string", "", D11, 1),
        ("Count", "string", "", D12, 1),
        ("Name", "string", "name", D0, 1),
    ],
    ("", "namespaces"): [
        ("Name", "string", "name", D0, 0),
        ("Status", "string", "", D13, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("", "nodes"): [
        ("Name", "string", "name", D0, 0),
        ("Status", "string", "", D14, 0),
        ("Roles", "string", "", D15, 0),
        ("Age", "string", "", D2, 0),
        ("Version", "string", "", D16, 0),
        ("Internal-IP", "string", "", D17, 1),
        ("External-IP", "string", "", D17, 1),
        ("OS-Image", "string", "", D18, 1),
        ("Kernel-Version", "string", "", D19, 1),
        ("Container-Runtime", "string", "", D20, 1),
    ],
    ("", "persistentvolumeclaims"): [
        ("Name", "string", "name", D0, 0),
        ("Status", "string", "", D21, 0),
        ("Volume", "string", "", D22, 0),
        ("Capacity", "string", "", D23, 0),
        ("Access Modes", "string", "", D24, 0),
        ("StorageClass", "string", "", D25, 0),
        ("Age", "string", "", D2, 0),
        ("VolumeMode", "string", "", D26, 1),
    ],
    ("", "persistentvolumes"): [
        ("Name", "string", "name", D0, 0),
        ("Capacity", "string", "", D27, 0),
        ("Access Modes", "string", "", D28, 0),
        ("Reclaim Policy", "string", "", D29, 0),
        ("Status", "string", "", D30, 0),
        ("Claim", "string", "", D31, 0),
        ("StorageClass", "string", "", D32, 0),
        ("Reason", "string", "", D33, 0),
        ("Age", "string", "", D2, 0),
        ("VolumeMode", "string", "", D34, 1),
    ],
    ("", "pods"): [
        ("Name", "string", "name", D0, 0),
        ("Ready", "string", "", D35, 0),
        ("Status", "string", "", D36, 0),
        ("Restarts", "string", "", D37, 0),
        ("Age", "string", "", D2, 0),
        ("IP", "string", "", D38, 1),
        ("Node", "string", "", D39, 1),
        ("Nominated Node", "string", "", D40, 1),
        ("Readiness Gates", "string", "", D41, 1),
    ],
    ("", "podtemplates"): [
        ("Name", "string", "name", D0, 0),
        ("Containers", "string", "", D42, 0),
        ("Images", "string", "", D43, 0),
        ("Pod Labels", "string", "", D44, 0),
    ],
    ("", "replicationcontrollers"): [
        ("Name", "string", "name", D0, 0),
        ("Desired", "integer", "", D45, 0),
        ("Current", "integer", "", D46, 0),
        ("Ready", "integer", "", D47, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D48, 1),
    ],
    ("", "resourcequotas"): [
        ("Name", "string", "name", D0, 0),
        ("Age", "string", "", D2, 0),
        ("Request", "string", "", D49, 0),
        ("Limit", "string", "", D50, 0),
    ],
    ("", "secrets"): [
        ("Name", "string", "name", D0, 0),
        ("Type", "string", "", D51, 0),
        ("Data", "string", "", D52, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("", "serviceaccounts"): [
        ("Name", "string", "name", D0, 0),
        ("Secrets", "string", "", D53, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("", "services"): [
        ("Name", "string", "name", D0, 0),
        ("Type", "string", "", D54, 0),
        ("Cluster-IP", "string", "", D55, 0),
        ("External-IP", "string", "", D56, 0),
        ("Port(s)", "string", "", D57, 0),
        ("Age", "string", "", D2, 0),
        ("Selector", "string", "", D58, 1),
    ],
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): [
        ("Name", "string", "name", D0, 0),
        ("Webhooks", "integer", "", D133, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): [
        ("Name", "string", "name", D0, 0),
        ("Webhooks", "integer", "", D133, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("apiregistration.k8s.io", "apiservices"): [
        ("Name", "string", "name", D0, 0),
        ("Service", "string", "", D134, 0),
        ("Available", "string", "", D135, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("apps", "controllerrevisions"): [
        ("Name", "string", "name", D0, 0),
        ("Controller", "string", "", D59, 0),
        ("Revision", "string", "", D60, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("apps", "daemonsets"): [
        ("Name", "string", "name", D0, 0),
        ("Desired", "integer", "", D61, 0),
        ("Current", "integer", "", D62, 0),
        ("Ready", "integer", "", D63, 0),
        ("Up-to-date", "integer", "", D64, 0),
        ("Available", "integer", "", D65, 0),
        ("Node Selector", "string", "", D66, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D67, 1),
    ],
    ("apps", "deployments"): [
        ("Name", "string", "name", D0, 0),
        ("Ready", "string", "", D68, 0),
        ("Up-to-date", "string", "", D69, 0),
        ("Available", "string", "", D70, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D71, 1),
    ],
    ("apps", "replicasets"): [
        ("Name", "string", "name", D0, 0),
        ("Desired", "integer", "", D72, 0),
        ("Current", "integer", "", D73, 0),
        ("Ready", "integer", "", D74, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D75, 1),
    ],
    ("apps", "statefulsets"): [
        ("Name", "string", "name", D0, 0),
        ("Ready", "string", "", D68, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
    ],
    ("autoscaling", "horizontalpodautoscalers"): [
        ("Name", "string", "name", D0, 0),
        ("Reference", "string", "", D76, 0),
        ("Targets", "string", "", D77, 0),
        ("MinPods", "string", "", D78, 0),
        ("MaxPods", "string", "", D79, 0),
        ("Replicas", "string", "", D80, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("batch", "cronjobs"): [
        ("Name", "string", "name", D0, 0),
        ("Schedule", "string", "", D84, 0),
        ("Suspend", "boolean", "", D85, 0),
        ("Active", "integer", "", D86, 0),
        ("Last Schedule", "string", "", D87, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D83, 1),
    ],
    ("batch", "jobs"): [
        ("Name", "string", "name", D0, 0),
        ("Completions", "string", "", D81, 0),
        ("Duration", "string", "", D82, 0),
        ("Age", "string", "", D2, 0),
        ("Containers", "string", "", D42, 1),
        ("Images", "string", "", D43, 1),
        ("Selector", "string", "", D83, 1),
    ],
    ("certificates.k8s.io", "certificatesigningrequests"): [
        ("Name", "string", "name", D0, 0),
        ("Age", "string", "", D2, 0),
        ("SignerName", "string", "", D88, 0),
        ("Requestor", "string", "", D89, 0),
        ("RequestedDuration", "string", "", D90, 0),
        ("Condition", "string", "", D91, 0),
    ],
    ("coordination.k8s.io", "leases"): [
        ("Name", "string", "name", D0, 0),
        ("Holder", "string", "", D138, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("discovery.k8s.io", "endpointslices"): [
        ("Name", "string", "name", D0, 0),
        ("AddressType", "string", "", D140, 0),
        ("Ports", "string", "", D141, 0),
        ("Endpoints", "string", "", D142, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("events.k8s.io", "events"): [
        ("Last Seen", "string", "", D4, 0),
        ("Type", "string", "", D5, 0),
        ("Reason", "string", "", D6, 0),
        ("Object", "string", "", D7, 0),
        ("Subobject", "string", "", D8, 1),
        ("Source", "string", "", D9, 1),
        ("Message", "string", "", D10, 0),
        ("First Seen", "string", "", D11, 1),
        ("Count", "string", "", D12, 1),
        ("Name", "string", "name", D0, 1),
    ],
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): [
        ("Name", "string", "name", D0, 0),
        ("PriorityLevel", "string", "", D148, 0),
        ("MatchingPrecedence", "string", "", D149, 0),
        ("DistinguisherMethod", "string", "", D150, 0),
        ("Age", "string", "", D2, 0),
        ("MissingPL", "string", "", D151, 0),
    ],
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): [
        ("Name", "string", "name", D0, 0),
        ("Type", "string", "", D143, 0),
        ("AssuredConcurrencyShares", "string", "", D144, 0),
        ("Queues", "string", "", D145, 0),
        ("HandSize", "string", "", D146, 0),
        ("QueueLengthLimit", "string", "", D147, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("networking.k8s.io", "ingressclasses"): [
        ("Name", "string", "name", D0, 0),
        ("Controller", "string", "", D92, 0),
        ("Parameters", "string", "", D93, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("networking.k8s.io", "ingresses"): [
        ("Name", "string", "name", D0, 0),
        ("Class", "string", "", D94, 0),
        ("Hosts", "string", "", D95, 0),
        ("Address", "string", "", D96, 0),
        ("Ports", "string", "", D97, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("networking.k8s.io", "networkpolicies"): [
        ("Name", "string", "name", D0, 0),
        ("Pod-Selector", "string", "", D98, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("node.k8s.io", "runtimeclasses"): [
        ("Name", "string", "name", D0, 0),
        ("Handler", "string", "", D139, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("policy", "poddisruptionbudgets"): [
        ("Name", "string", "name", D0, 0),
        ("Min Available", "string", "", D99, 0),
        ("Max Unavailable", "string", "", D100, 0),
        ("Allowed Disruptions", "integer", "", D101, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("policy", "podsecuritypolicies"): [
        ("Name", "string", "name", D0, 0),
        ("Priv", "string", "", D102, 0),
        ("Caps", "string", "", D103, 0),
        ("SELinux", "string", "", D104, 0),
        ("RunAsUser", "string", "", D105, 0),
        ("FsGroup", "string", "", D106, 0),
        ("SupGroup", "string", "", D107, 0),
        ("ReadOnlyRootFs", "string", "", D108, 0),
        ("Volumes", "string", "", D109, 0),
    ],
    ("rbac.authorization.k8s.io", "clusterrolebindings"): [
        ("Name", "string", "name", D0, 0),
        ("Role", "string", "", D110, 0),
        ("Age", "string", "", D2, 0),
        ("Users", "string", "", D111, 1),
        ("Groups", "string", "", D112, 1),
        ("ServiceAccounts", "string", "", D113, 1),
    ],
    ("rbac.authorization.k8s.io", "rolebindings"): [
        ("Name", "string", "name", D0, 0),
        ("Role", "string", "", D114, 0),
        ("Age", "string", "", D2, 0),
        ("Users", "string", "", D115, 1),
        ("Groups", "string", "", D116, 1),
        ("ServiceAccounts", "string", "", D117, 1),
    ],
    ("scheduling.k8s.io", "priorityclasses"): [
        ("Name", "string", "name", D0, 0),
        ("Value", "integer", "", D136, 0),
        ("Global-Default", "boolean", "", D137, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("storage.k8s.io", "csidrivers"): [
        ("Name", "string", "name", D0, 0),
        ("AttachRequired", "boolean", "", D118, 0),
        ("PodInfoOnMount", "boolean", "", D119, 0),
        ("StorageCapacity", "boolean", "", D120, 0),
        ("TokenRequests", "string", "", D121, 0),
        ("RequiresRepublish", "boolean", "", D122, 0),
        ("Modes", "string", "", D123, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("storage.k8s.io", "csinodes"): [
        ("Name", "string", "name", D0, 0),
        ("Drivers", "integer", "", D124, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("storage.k8s.io", "storageclasses"): [
        ("Name", "string", "name", D0, 0),
        ("Provisioner", "string", "", D125, 0),
        ("ReclaimPolicy", "string", "", D126, 0),
        ("VolumeBindingMode", "string", "", D127, 0),
        ("AllowVolumeExpansion", "string", "", D128, 0),
        ("Age", "string", "", D2, 0),
    ],
    ("storage.k8s.io", "volumeattachments"): [
        ("Name", "string", "name", D0, 0),
        ("Attacher", "string", "name", D129, 0),
        ("PV", "string", "", D130, 0),
        ("Node", "string", "", D131, 0),
        ("Attached", "boolean", "", D132, 0),
        ("Age", "string", "", D2, 0),
    ],
}
