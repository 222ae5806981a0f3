"""The Table columns kube-apiserver 1.24 prints for each built-in resource (`pkg/printers/internalversion`).

Generated from the recorded Tables in tests/testing/data/surface-1.24.json (names, types, formats,
priorities and the descriptions the API documents each column with); `tables.py` makes the cells.
"""

from __future__ import annotations

# the column descriptions, each once
D0 = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names"
D1 = "Status of the component conditions"
D2 = "Message of the component conditions"
D3 = "Error of the component conditions"
D4 = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."
D5 = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
D6 = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service."
D7 = "The time at which the most recent occurrence of this event was recorded."
D8 = "Type of this event (Normal, Warning), new types could be added in the future"
D9 = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
D10 = "The object that this event is about."
D11 = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object."
D12 = "The component reporting this event. Should be a short machine understandable string."
D13 = "A human-readable description of the status of this operation."
D14 = "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"
D15 = "The number of times this event has occurred."
D16 = "The status of the namespace"
D17 = "The status of the node"
D18 = "The roles of the node"
D19 = "Kubelet Version reported by the node."
D20 = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See http://pr.k8s.io/79391 for an example."
D21 = "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."
D22 = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."
D23 = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."
D24 = "phase represents the current phase of PersistentVolumeClaim."
D25 = "volumeName is the binding reference to the PersistentVolume backing this claim."
D26 = "capacity represents the actual resources of the underlying volume."
D27 = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"
D28 = "StorageClass of the pvc"
D29 = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."
D30 = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"
D31 = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"
D32 = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"
D33 = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"
D34 = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"
D35 = "StorageClass of the pv"
D36 = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."
D37 = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec."
D38 = "The aggregate readiness state of this pod for accepting traffic."
D39 = "The aggregate status of the containers in this pod."
D40 = "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."
D41 = "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."
D42 = "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements."
D43 = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled."
D44 = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"
D45 = "Names of each container in the template."
D46 = "Images referenced by each container in the template."
D47 = "The labels for the pod template."
D48 = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
D49 = "Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
D50 = "The number of ready replicas for this replication controller."
D51 = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D52 = "Request represents a minimum amount of cpu/memory that a container may consume."
D53 = "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
D54 = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"
D55 = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"
D56 = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret"
D57 = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types"
D58 = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
D59 = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system."
D60 = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
D61 = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/"
D62 = "Webhooks indicates the number of webhooks registered in this configuration"
D63 = "The reference to the service that hosts this API endpoint."
D64 = "Whether this service is available."
D65 = "Controller of the object"
D66 = "Revision indicates the revision of the state represented by Data."
D67 = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
D68 = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
D69 = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."
D70 = "The total number of nodes that are running updated daemon pod"
D71 = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"
D72 = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"
D73 = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D74 = "Number of the pod with ready state"
D75 = "Total number of non-terminated pods targeted by this deployment that have the desired template spec."
D76 = "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."
D77 = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."
D78 = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller"
D79 = "Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller"
D80 = "The number of ready replicas for this replica set."
D81 = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D82 = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."
D83 = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond."
D84 = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."
D85 = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."
D86 = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."
D87 = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
D88 = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."
D89 = "A list of pointers to currently running jobs."
D90 = "Information when was the last time the job was successfully scheduled."
D91 = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
D92 = "The number of pods which reached phase Succeeded."
D93 = "Time required to complete the job."
D94 = "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`."
D95 = "Base64-encoded PKCS#10 CSR data"
D96 = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes."
D97 = "Conditions applied to the request, such as approval or denial."
D98 = "holderIdentity contains the identity of the holder of a current lease."
D99 = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name."
D100 = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports."
D101 = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints."
D102 = "`name` is the name of the priority level configuration being referenced Required."
D103 = "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default."
D104 = "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string."
D105 = "references a broken or non-existent PriorityLevelConfiguration"
D106 = "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required."
D107 = "`assuredConcurrencyShares` (ACS) configures the execution limit, which is a limit on the number of requests of this priority level that may be exeucting at a given time.  ACS must be a positive number. The server's concurrency limit (SCL) is divided among the concurrency-controlled priority levels in proportion to their assured concurrency shares. This produces the assured concurrency value (ACV) "
D108 = "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64."
D109 = "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8."
D110 = "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50."
D111 = "Controller that is responsible for handling this class"
D112 = "A reference to a resource with additional parameters"
D113 = "The name of the IngressClass resource that should be used for additional configuration"
D114 = "Hosts that incoming requests are matched against before the ingress rule"
D115 = "Address is a list containing ingress points for the load-balancer"
D116 = "Ports of TLS configurations that open"
D117 = "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace."
D118 = ""
D119 = "The minimum number of pods that must be available."
D120 = "The maximum number of pods that may be unavailable."
D121 = "Calculated number of pods that may be disrupted at this time."
D122 = "privileged determines if a pod can request to be run as privileged."
D123 = "allowedCapabilities is a list of capabilities that can be requested to add to the container. Capabilities in this field may be added at the pod author's discretion. You must not list a capability in both allowedCapabilities and requiredDropCapabilities."
D124 = "seLinux is the strategy that will dictate the allowable labels that may be set."
D125 = "runAsUser is the strategy that will dictate the allowable RunAsUser values that may be set."
D126 = "fsGroup is the strategy that will dictate what fs group is used by the SecurityContext."
D127 = "supplementalGroups is the strategy that will dictate what supplemental groups are used by the SecurityContext."
D128 = "readOnlyRootFilesystem when set to true will force containers to run with a read only root file system.  If the container specifically requests to run with a non-read only root file system the PSP should deny the pod. If set to false the container may run with a read only root file system if it wishes but it will not be forced to."
D129 = "volumes is an allowlist of volume plugins. Empty indicates that no volumes may be used. To allow all volumes you may use '*'."
D130 = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
D131 = "Users in the clusterRoleBinding"
D132 = "Groups in the clusterRoleBinding"
D133 = "ServiceAccounts in the clusterRoleBinding"
D134 = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
D135 = "Users in the roleBinding"
D136 = "Groups in the roleBinding"
D137 = "ServiceAccounts in the roleBinding"
D138 = "The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."
D139 = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."
D140 = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."
D141 = "If set to true, podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations. If set to false, pod information will not be passed on mount. Default is false. The CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext. The following VolumeConext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field is immutable."
D142 = "If set to true, storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."
D143 = "TokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically."
D144 = "RequiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."
D145 = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism. The other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume. For more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future. This field is beta.\n\nThis field is immutable."
D146 = "Drivers indicates the number of CSI drivers registered on the node"
D147 = "Provisioner indicates the type of the provisioner."
D148 = "Dynamically provisioned PersistentVolumes of this storage class are created with this reclaimPolicy. Defaults to Delete."
D149 = "VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature."
D150 = "AllowVolumeExpansion shows whether the storage class allow volume expand"
D151 = "Attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName()."
D152 = "Name of the persistent volume to attach."
D153 = "The node that the volume should be attached to."
D154 = "Indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."

# the columns, each once: (name, type, format, description, priority)
C0 = ("Name", "string", "name", D0, 0)
C1 = ("Status", "string", "", D1, 0)
C2 = ("Message", "string", "", D2, 0)
C3 = ("Error", "string", "", D3, 0)
C4 = ("Data", "string", "", D4, 0)
C5 = ("Age", "string", "", D5, 0)
C6 = ("Endpoints", "string", "", D6, 0)
C7 = ("Last Seen", "string", "", D7, 0)
C8 = ("Type", "string", "", D8, 0)
C9 = ("Reason", "string", "", D9, 0)
C10 = ("Object", "string", "", D10, 0)
C11 = ("Subobject", "string", "", D11, 1)
C12 = ("Source", "string", "", D12, 1)
C13 = ("Message", "string", "", D13, 0)
C14 = ("First Seen", "string", "", D14, 1)
C15 = ("Count", "string", "", D15, 1)
C16 = ("Name", "string", "name", D0, 1)
C17 = ("Status", "string", "", D16, 0)
C18 = ("Status", "string", "", D17, 0)
C19 = ("Roles", "string", "", D18, 0)
C20 = ("Version", "string", "", D19, 0)
C21 = ("Internal-IP", "string", "", D20, 1)
C22 = ("External-IP", "string", "", D20, 1)
C23 = ("OS-Image", "string", "", D21, 1)
C24 = ("Kernel-Version", "string", "", D22, 1)
C25 = ("Container-Runtime", "string", "", D23, 1)
C26 = ("Status", "string", "", D24, 0)
C27 = ("Volume", "string", "", D25, 0)
C28 = ("Capacity", "string", "", D26, 0)
C29 = ("Access Modes", "string", "", D27, 0)
C30 = ("StorageClass", "string", "", D28, 0)
C31 = ("VolumeMode", "string", "", D29, 1)
C32 = ("Capacity", "string", "", D30, 0)
C33 = ("Access Modes", "string", "", D31, 0)
C34 = ("Reclaim Policy", "string", "", D32, 0)
C35 = ("Status", "string", "", D33, 0)
C36 = ("Claim", "string", "", D34, 0)
C37 = ("StorageClass", "string", "", D35, 0)
C38 = ("Reason", "string", "", D36, 0)
C39 = ("VolumeMode", "string", "", D37, 1)
C40 = ("Ready", "string", "", D38, 0)
C41 = ("Status", "string", "", D39, 0)
C42 = ("Restarts", "string", "", D40, 0)
C43 = ("IP", "string", "", D41, 1)
C44 = ("Node", "string", "", D42, 1)
C45 = ("Nominated Node", "string", "", D43, 1)
C46 = ("Readiness Gates", "string", "", D44, 1)
C47 = ("Containers", "string", "", D45, 0)
C48 = ("Images", "string", "", D46, 0)
C49 = ("Pod Labels", "string", "", D47, 0)
C50 = ("Desired", "integer", "", D48, 0)
C51 = ("Current", "integer", "", D49, 0)
C52 = ("Ready", "integer", "", D50, 0)
C53 = ("Containers", "string", "", D45, 1)
C54 = ("Images", "string", "", D46, 1)
C55 = ("Selector", "string", "", D51, 1)
C56 = ("Request", "string", "", D52, 0)
C57 = ("Limit", "string", "", D53, 0)
C58 = ("Type", "string", "", D54, 0)
C59 = ("Data", "string", "", D55, 0)
C60 = ("Secrets", "string", "", D56, 0)
C61 = ("Type", "string", "", D57, 0)
C62 = ("Cluster-IP", "string", "", D58, 0)
C63 = ("External-IP", "string", "", D59, 0)
C64 = ("Port(s)", "string", "", D60, 0)
C65 = ("Selector", "string", "", D61, 1)
C66 = ("Webhooks", "integer", "", D62, 0)
C67 = ("Service", "string", "", D63, 0)
C68 = ("Available", "string", "", D64, 0)
C69 = ("Controller", "string", "", D65, 0)
C70 = ("Revision", "string", "", D66, 0)
C71 = ("Desired", "integer", "", D67, 0)
C72 = ("Current", "integer", "", D68, 0)
C73 = ("Ready", "integer", "", D69, 0)
C74 = ("Up-to-date", "integer", "", D70, 0)
C75 = ("Available", "integer", "", D71, 0)
C76 = ("Node Selector", "string", "", D72, 0)
C77 = ("Selector", "string", "", D73, 1)
C78 = ("Ready", "string", "", D74, 0)
C79 = ("Up-to-date", "string", "", D75, 0)
C80 = ("Available", "string", "", D76, 0)
C81 = ("Selector", "string", "", D77, 1)
C82 = ("Desired", "integer", "", D78, 0)
C83 = ("Current", "integer", "", D79, 0)
C84 = ("Ready", "integer", "", D80, 0)
C85 = ("Selector", "string", "", D81, 1)
C86 = ("Reference", "string", "", D82, 0)
C87 = ("Targets", "string", "", D83, 0)
C88 = ("MinPods", "string", "", D84, 0)
C89 = ("MaxPods", "string", "", D85, 0)
C90 = ("Replicas", "string", "", D86, 0)
C91 = ("Schedule", "string", "", D87, 0)
C92 = ("Suspend", "boolean", "", D88, 0)
C93 = ("Active", "integer", "", D89, 0)
C94 = ("Last Schedule", "string", "", D90, 0)
C95 = ("Selector", "string", "", D91, 1)
C96 = ("Completions", "string", "", D92, 0)
C97 = ("Duration", "string", "", D93, 0)
C98 = ("SignerName", "string", "", D94, 0)
C99 = ("Requestor", "string", "", D95, 0)
C100 = ("RequestedDuration", "string", "", D96, 0)
C101 = ("Condition", "string", "", D97, 0)
C102 = ("Holder", "string", "", D98, 0)
C103 = ("AddressType", "string", "", D99, 0)
C104 = ("Ports", "string", "", D100, 0)
C105 = ("Endpoints", "string", "", D101, 0)
C106 = ("PriorityLevel", "string", "", D102, 0)
C107 = ("MatchingPrecedence", "string", "", D103, 0)
C108 = ("DistinguisherMethod", "string", "", D104, 0)
C109 = ("MissingPL", "string", "", D105, 0)
C110 = ("Type", "string", "", D106, 0)
C111 = ("AssuredConcurrencyShares", "string", "", D107, 0)
C112 = ("Queues", "string", "", D108, 0)
C113 = ("HandSize", "string", "", D109, 0)
C114 = ("QueueLengthLimit", "string", "", D110, 0)
C115 = ("Controller", "string", "", D111, 0)
C116 = ("Parameters", "string", "", D112, 0)
C117 = ("Class", "string", "", D113, 0)
C118 = ("Hosts", "string", "", D114, 0)
C119 = ("Address", "string", "", D115, 0)
C120 = ("Ports", "string", "", D116, 0)
C121 = ("Pod-Selector", "string", "", D117, 0)
C122 = ("Handler", "string", "", D118, 0)
C123 = ("Min Available", "string", "", D119, 0)
C124 = ("Max Unavailable", "string", "", D120, 0)
C125 = ("Allowed Disruptions", "integer", "", D121, 0)
C126 = ("Priv", "string", "", D122, 0)
C127 = ("Caps", "string", "", D123, 0)
C128 = ("SELinux", "string", "", D124, 0)
C129 = ("RunAsUser", "string", "", D125, 0)
C130 = ("FsGroup", "string", "", D126, 0)
C131 = ("SupGroup", "string", "", D127, 0)
C132 = ("ReadOnlyRootFs", "string", "", D128, 0)
C133 = ("Volumes", "string", "", D129, 0)
C134 = ("Role", "string", "", D130, 0)
C135 = ("Users", "string", "", D131, 1)
C136 = ("Groups", "string", "", D132, 1)
C137 = ("ServiceAccounts", "string", "", D133, 1)
C138 = ("Role", "string", "", D134, 0)
C139 = ("Users", "string", "", D135, 1)
C140 = ("Groups", "string", "", D136, 1)
C141 = ("ServiceAccounts", "string", "", D137, 1)
C142 = ("Value", "integer", "", D138, 0)
C143 = ("Global-Default", "boolean", "", D139, 0)
C144 = ("AttachRequired", "boolean", "", D140, 0)
C145 = ("PodInfoOnMount", "boolean", "", D141, 0)
C146 = ("StorageCapacity", "boolean", "", D142, 0)
C147 = ("TokenRequests", "string", "", D143, 0)
C148 = ("RequiresRepublish", "boolean", "", D144, 0)
C149 = ("Modes", "string", "", D145, 0)
C150 = ("Drivers", "integer", "", D146, 0)
C151 = ("Provisioner", "string", "", D147, 0)
C152 = ("ReclaimPolicy", "string", "", D148, 0)
C153 = ("VolumeBindingMode", "string", "", D149, 0)
C154 = ("AllowVolumeExpansion", "string", "", D150, 0)
C155 = ("Attacher", "string", "name", D151, 0)
C156 = ("PV", "string", "", D152, 0)
C157 = ("Node", "string", "", D153, 0)
C158 = ("Attached", "boolean", "", D154, 0)

#: (group, resource) -> its columns, in order
COLUMNS: dict[tuple[str, str], list[tuple[str, str, str, str, int]]] = {
    ("", "componentstatuses"): [C0, C1, C2, C3],
    ("", "configmaps"): [C0, C4, C5],
    ("", "endpoints"): [C0, C6, C5],
    ("", "events"): [C7, C8, C9, C10, C11, C12, C13, C14, C15, C16],
    ("", "namespaces"): [C0, C17, C5],
    ("", "nodes"): [C0, C18, C19, C5, C20, C21, C22, C23, C24, C25],
    ("", "persistentvolumeclaims"): [C0, C26, C27, C28, C29, C30, C5, C31],
    ("", "persistentvolumes"): [C0, C32, C33, C34, C35, C36, C37, C38, C5, C39],
    ("", "pods"): [C0, C40, C41, C42, C5, C43, C44, C45, C46],
    ("", "podtemplates"): [C0, C47, C48, C49],
    ("", "replicationcontrollers"): [C0, C50, C51, C52, C5, C53, C54, C55],
    ("", "resourcequotas"): [C0, C5, C56, C57],
    ("", "secrets"): [C0, C58, C59, C5],
    ("", "serviceaccounts"): [C0, C60, C5],
    ("", "services"): [C0, C61, C62, C63, C64, C5, C65],
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): [C0, C66, C5],
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): [C0, C66, C5],
    ("apiregistration.k8s.io", "apiservices"): [C0, C67, C68, C5],
    ("apps", "controllerrevisions"): [C0, C69, C70, C5],
    ("apps", "daemonsets"): [C0, C71, C72, C73, C74, C75, C76, C5, C53, C54, C77],
    ("apps", "deployments"): [C0, C78, C79, C80, C5, C53, C54, C81],
    ("apps", "replicasets"): [C0, C82, C83, C84, C5, C53, C54, C85],
    ("apps", "statefulsets"): [C0, C78, C5, C53, C54],
    ("autoscaling", "horizontalpodautoscalers"): [C0, C86, C87, C88, C89, C90, C5],
    ("batch", "cronjobs"): [C0, C91, C92, C93, C94, C5, C53, C54, C95],
    ("batch", "jobs"): [C0, C96, C97, C5, C53, C54, C95],
    ("certificates.k8s.io", "certificatesigningrequests"): [C0, C5, C98, C99, C100, C101],
    ("coordination.k8s.io", "leases"): [C0, C102, C5],
    ("discovery.k8s.io", "endpointslices"): [C0, C103, C104, C105, C5],
    ("events.k8s.io", "events"): [C7, C8, C9, C10, C11, C12, C13, C14, C15, C16],
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): [C0, C106, C107, C108, C5, C109],
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): [C0, C110, C111, C112, C113, C114, C5],
    ("networking.k8s.io", "ingressclasses"): [C0, C115, C116, C5],
    ("networking.k8s.io", "ingresses"): [C0, C117, C118, C119, C120, C5],
    ("networking.k8s.io", "networkpolicies"): [C0, C121, C5],
    ("node.k8s.io", "runtimeclasses"): [C0, C122, C5],
    ("policy", "poddisruptionbudgets"): [C0, C123, C124, C125, C5],
    ("policy", "podsecuritypolicies"): [C0, C126, C127, C128, C129, C130, C131, C132, C133],
    ("rbac.authorization.k8s.io", "clusterrolebindings"): [C0, C134, C5, C135, C136, C137],
    ("rbac.authorization.k8s.io", "rolebindings"): [C0, C138, C5, C139, C140, C141],
    ("scheduling.k8s.io", "priorityclasses"): [C0, C142, C143, C5],
    ("storage.k8s.io", "csidrivers"): [C0, C144, C145, C146, C147, C148, C149, C5],
    ("storage.k8s.io", "csinodes"): [C0, C150, C5],
    ("storage.k8s.io", "storageclasses"): [C0, C151, C152, C153, C154, C5],
    ("storage.k8s.io", "volumeattachments"): [C0, C155, C156, C157, C158, C5],
}
