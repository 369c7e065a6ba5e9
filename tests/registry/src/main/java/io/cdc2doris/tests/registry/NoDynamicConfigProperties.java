package io.cdc2doris.tests.registry;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.List;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * Stands in for the bean that apicurio-common-app-components-config-index's
 * build step generates (its deployment artifact is not on Maven Central): the
 * properties an admin may change at run time. None here, so every property
 * keeps the value it starts with; the schema API does not depend on it.
 */
public class NoDynamicConfigProperties {
    @Produces
    @ApplicationScoped
    DynamicConfigPropertyList none() {
        return new DynamicConfigPropertyList(List.of());
    }
}
